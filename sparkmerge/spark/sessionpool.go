package spark

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/sparkmerge/sparkmerge/spark/internal/connect"
)

// A Spark Connect server compiles a merge's projections for each session
// anew: an executor gives every session a class loader of its own, and
// Spark's cache of generated code is keyed by class loader. So a merge in
// a new session spends seconds compiling code and running it interpreted
// until HotSpot compiles it again, where the same merge in a session that
// ran it before does not (dated-csv at N = 200: 18.6 s in a new session,
// 14.4 s in one that had merged it before, the inferring floor 13.5-14.5 s;
// docs/benchmarks.md#sessions-kept-for-the-next-merge).
//
// A session pool keeps the sessions its clients started, on the server,
// for the next client on this machine that connects to the same server as
// the same user: a slot file per session in the pool's directory, locked
// (flock) while a client runs on it, so that no two clients share one;
// more clients at once than slots start sessions of their own, released
// at Close as always. A slot holds the session's id, a token the session
// holds as a setting (poolMarkerKey) and the session's settings as they
// were when it was new. A client taking a slot stops whatever the slot's
// last client left running (a client killed mid-merge leaves its Spark
// job running) and puts the settings back as they were, before setting its
// own: a session that forgot the token (a server restarted, or one that
// dropped it) is new, and one the server has closed (idle past its
// timeout) is replaced by a new one.
//
// Only sessions a client starts are pooled: never one whose id was given,
// or one shared on purpose (a client that gave its id away, see
// [Client.SessionID], gives up the slot's session), nor one that named a
// catalog table, whose schema and files Spark then caches in it (given up
// the moment it does, see connect.Session.NamesTables and Client.Close).

// poolSlots is how many sessions a pool keeps per server and user.
const poolSlots = 4

// poolMarkerKey is the session setting holding the slot's token.
const poolMarkerKey = "sparkmerge.session.pool"

// sessionSlot is a pool's slot, locked by this process.
type sessionSlot struct {
	file  *os.File
	state slotState
}

// slotState is what a slot file holds.
type slotState struct {
	SessionID string `json:"session_id"`
	// Token is the value of poolMarkerKey in the session.
	Token string `json:"token"`
	// Settings are the session's settings when it was new, the marker
	// set (connect.Session.Settings).
	Settings map[string]string `json:"settings"`
}

// poolKey names a pool's slots for a server, a user and a token: sessions
// are the server's per user, and a token may stand for another user. The
// token is hashed, never written.
func poolKey(r connect.Remote, getenv func(string) string) string {
	h := sha256.New()
	for _, part := range []string{r.Redacted(), connect.SessionUser(r, getenv), connect.EnvToken(r, getenv)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// takeSlot locks the first free slot of the pool in dir for key, or
// returns nil when every slot is taken by another client.
func takeSlot(dir, key string) (*sessionSlot, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	for i := range poolSlots {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%s-%d.json", key, i)), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		locked, err := lockFile(f)
		if err != nil || !locked {
			f.Close()
			if err != nil {
				return nil, err
			}
			continue
		}
		s := &sessionSlot{file: f}
		if data, err := io.ReadAll(f); err == nil && len(data) > 0 {
			// A file that does not parse (written by a client killed
			// mid-write) is an empty slot.
			if json.Unmarshal(data, &s.state) != nil {
				s.state = slotState{}
			}
		}
		if _, err := uuid.Parse(s.state.SessionID); err != nil {
			s.state = slotState{}
		}
		return s, nil
	}
	return nil, nil
}

// sessionID is the slot's session, a new one when it has none.
func (s *sessionSlot) sessionID() string {
	if s.state.SessionID == "" {
		s.state = slotState{SessionID: uuid.NewString()}
	}
	return s.state.SessionID
}

// renew gives the slot a new session, for one the server has closed.
func (s *sessionSlot) renew() string {
	s.state = slotState{}
	return s.sessionID()
}

// prepare makes the slot's session as a new one is: what a killed client
// left running stopped, the settings as they were when it was new. A
// session that does not hold the slot's token is new: its token and
// settings are recorded.
func (s *sessionSlot) prepare(ctx context.Context, sess *connect.Session) error {
	marker, err := sess.ConfOption(ctx, poolMarkerKey)
	if err != nil {
		return err
	}
	if s.state.Token != "" && marker[poolMarkerKey] == s.state.Token {
		if err := sess.InterruptAll(ctx); err != nil {
			return err
		}
		return sess.ResetSettings(ctx, s.state.Settings)
	}
	token := uuid.NewString()
	if err := sess.SetConf(ctx, map[string]string{poolMarkerKey: token}); err != nil {
		return err
	}
	settings, err := sess.Settings(ctx)
	if err != nil {
		return err
	}
	s.state = slotState{SessionID: sess.SessionID(), Token: token, Settings: settings}
	return s.save()
}

// forget empties the slot: its session is no longer the pool's.
func (s *sessionSlot) forget() error {
	s.state = slotState{}
	return s.save()
}

// save writes the slot's state to its file.
func (s *sessionSlot) save() error {
	data, err := json.Marshal(s.state)
	if err != nil {
		return err
	}
	if err := s.file.Truncate(0); err != nil {
		return err
	}
	_, err = s.file.WriteAt(data, 0)
	return err
}

// release unlocks the slot for the next client.
func (s *sessionSlot) release() {
	_ = unlockFile(s.file)
	s.file.Close()
}

// sessionClosed says whether err is the server refusing a session id it
// has closed (released, or idle past its timeout).
func sessionClosed(err error) bool {
	return err != nil && strings.Contains(err.Error(), "SESSION_CLOSED")
}
