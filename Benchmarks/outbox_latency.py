#!/usr/bin/env python3
"""Load side of Benchmarks/outbox-latency.sh: end-to-end latency from the SDK's outbox on one client to the SDK's
subscription on another, through `kizuna-chat` (Examples/Chat), the example client on the SDK.

Two child processes of the release `kizuna-chat`, both with this script on CPU 1: `listen ROOM` as the reader (the
SDK's subscription, onCreateMessage filtered to the room, over graphql-transport-ws), and `chat ROOM` as the writer,
whose standard input this script writes. Each message is one line `m <i> <time.time_ns()>`, written at RATE lines a
second, after --warmup messages that are not counted; `chat` hands each to `app.data.outbox.send` (stored in SQLite, then sent as a createMessage in the room's
lane, one at a time in order) and the reader prints `<author>: m <i> <ns>` when its subscription delivers it. A
message's latency is the time this script reads the reader's line minus the ns in it: everything an app sees, from
the outbox call to the other app's AsyncSequence (plus two pipe hops into this script, tens of µs). Prints one JSON
line: count, p50/p99/max in ms, and whether every message arrived once, in order.
"""

import argparse
import json
import os
import subprocess
import threading
import time


def percentile(ordered, q):
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chat", required=True, help="the kizuna-chat binary")
    parser.add_argument("--server", required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--room", required=True)
    parser.add_argument("--writer", required=True, help="email of the sender (signed up, a member)")
    parser.add_argument("--reader", required=True, help="email of the reader (signed up, a member)")
    parser.add_argument("--directory", required=True, help="where kizuna-chat keeps each person's state")
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=50, help="messages a second")
    parser.add_argument("--warmup", type=int, default=5, help="messages before the measured ones, not counted")
    parser.add_argument("--round", type=int, default=0)
    args = parser.parse_args()

    def person(command, who):
        return [args.chat, command, "--server", args.server, "--app", args.app, "--as", who,
                "--directory", os.path.join(args.directory, who), args.room]

    reader = subprocess.Popen(person("listen", args.reader), stdout=subprocess.PIPE, text=True, bufsize=1)
    line = reader.stdout.readline()
    if not line.startswith("listening to"):
        raise SystemExit("the reader did not start: %r" % line)
    received = []
    done = threading.Event()
    warm = threading.Event()

    def read():
        for line in reader.stdout:
            now = time.time_ns()
            parts = line.rsplit(": ", 1)[-1].split()
            if len(parts) == 3 and parts[0] == "w" and int(parts[1]) == args.warmup - 1:
                warm.set()
            if len(parts) == 3 and parts[0] == "m":
                received.append((int(parts[1]), now - int(parts[2])))
                if len(received) == args.messages:
                    done.set()
                    return

    threading.Thread(target=read, daemon=True).start()
    writer = subprocess.Popen(person("chat", args.writer), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    # The writer is ready once its own subscription has opened ("chat" listens too); then warm-up messages, not
    # counted, until the reader has the last of them (the first send opens the outbox's database and connections).
    line = writer.stdout.readline()
    if not line.startswith("listening to"):
        raise SystemExit("the writer did not start: %r" % line)
    threading.Thread(target=lambda: [None for _ in writer.stdout], daemon=True).start()
    for i in range(args.warmup):
        writer.stdin.write("w %d %d\n" % (i, time.time_ns()))
        writer.stdin.flush()
    if not warm.wait(timeout=60):
        raise SystemExit("the warm-up messages did not arrive")
    start = time.monotonic()
    for i in range(args.messages):
        delay = start + i / args.rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        writer.stdin.write("m %d %d\n" % (i, time.time_ns()))
        writer.stdin.flush()
    done.wait(timeout=120)
    writer.stdin.close()
    writer.wait(timeout=60)
    reader.kill()
    latencies = sorted(ms for _, ms in received)
    order = [i for i, _ in received]
    print(json.dumps({
        "round": args.round, "messages": args.messages, "rate": args.rate, "received": len(received),
        "in_order_once": order == list(range(args.messages)),
        "p50_ms": round(percentile(latencies, 0.50) / 1e6, 3) if latencies else None,
        "p99_ms": round(percentile(latencies, 0.99) / 1e6, 3) if latencies else None,
        "max_ms": round(latencies[-1] / 1e6, 3) if latencies else None,
    }), flush=True)


if __name__ == "__main__":
    main()
