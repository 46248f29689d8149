#!/usr/bin/env python3
"""Count gRPC calls between a Spark Connect client and server.

  rpcproxy.py --listen 15099 --target 127.0.0.1:15002 --count FILE

A plain TCP relay that parses the client's HTTP/2 (h2c) frames: every new
client stream opened by a HEADERS frame is one RPC (AnalyzePlan,
ExecutePlan, ReattachExecute, ReleaseExecute, Config, ...). The running total
is written to FILE after each new stream. Used only for the RPC-count pass,
never while timing.
"""
import argparse
import asyncio

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


class Counter:
    def __init__(self, path):
        self.path = path
        self.n = 0

    def bump(self):
        self.n += 1
        with open(self.path, "w") as out:
            out.write(str(self.n))


async def pipe(reader, writer, parse=None):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if parse:
                parse(data)
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


def client_parser(counter):
    buf = bytearray()
    state = {"preface": False, "seen": set()}

    def parse(data):
        buf.extend(data)
        if not state["preface"]:
            if len(buf) < len(PREFACE):
                return
            del buf[: len(PREFACE)]
            state["preface"] = True
        while len(buf) >= 9:
            length = int.from_bytes(buf[0:3], "big")
            if len(buf) < 9 + length:
                return
            ftype = buf[3]
            stream = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
            if ftype == 1 and stream not in state["seen"]:
                state["seen"].add(stream)
                counter.bump()
            del buf[: 9 + length]

    return parse


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--count", required=True)
    args = ap.parse_args()
    host, port = args.target.rsplit(":", 1)
    counter = Counter(args.count)
    counter.n = -1
    counter.bump()  # writes 0

    async def handle(cr, cw):
        sr, sw = await asyncio.open_connection(host, int(port))
        await asyncio.gather(pipe(cr, sw, client_parser(counter)), pipe(sr, cw))

    server = await asyncio.start_server(handle, "127.0.0.1", args.listen)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
