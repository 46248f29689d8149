// Command cpuprobe times a fixed amount of CPU work on every core at once
// and prints the seconds it took, so that scripts/test.sh can tell a slow
// machine from a slow suite: on a virtual machine whose host is busy the
// same work takes a quarter to a half longer (docs/testing.md#time), and
// so does every test.
//
//	cpuprobe [-rounds N]
//
// The work is what a Spark server's threads do most, in small: hashing
// bytes, allocating and sorting, looking up maps. It prints the median
// round's seconds.
package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"
)

func main() {
	rounds := flag.Int("rounds", 3, "rounds of work to time (the median is printed)")
	flag.Parse()
	if *rounds < 1 {
		fmt.Fprintln(os.Stderr, "cpuprobe: -rounds must be at least 1")
		os.Exit(2)
	}
	var took []float64
	for range *rounds {
		took = append(took, round(runtime.NumCPU()))
	}
	slices.Sort(took)
	fmt.Printf("%.3f\n", took[len(took)/2])
}

// round runs one unit of work on each of n goroutines at once and returns
// the seconds until the last ended.
func round(n int) float64 {
	began := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { work(uint64(i)) })
	}
	wg.Wait()
	return time.Since(began).Seconds()
}

// work is a fixed amount of CPU work: about half a second on one core of
// the machine the budget was set on.
func work(seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	var sum uint64
	for range 384 {
		h := sha256.Sum256(buf)
		sum += uint64(h[0])
		buf[int(h[1])] ^= h[2]
	}
	for range 48 {
		m := make(map[string]int, 1<<14)
		keys := make([]string, 0, 1<<15)
		for j := range 1 << 15 {
			k := strconv.FormatUint(r.Uint64()%(1<<16), 36)
			m[k] += j
			keys = append(keys, k)
		}
		slices.Sort(keys)
		sum += uint64(len(m)) + uint64(len(keys[0]))
	}
	runtime.KeepAlive(sum) // so that the compiler keeps the work
}
