"""Server memory per idle WebSocket connection: opens N connections to a WebSocket URL (200 at a time), each sending
one text message and reading its answer, and reports the server's VmRSS growth per connection, measured as
subscriptions_load.py measures it (RSS with the first connection open, 2 s after it, and with all N open, 2 s after
them). Used by subscriptions.sh for the bare hummingbird-websocket floor (Benchmarks/WebSocketPeer).

python3 websocket_idle.py --url ws://127.0.0.1:18099/ws --subscribers 1000 --server-pid PID
"""
import argparse
import asyncio
import json

import websockets
from subscriptions_load import rss_kb  # the same VmRSS reading as the kizuna and mosquitto runs


async def open_one(url, held):
    socket = await websockets.connect(url, subprotocols=["graphql-transport-ws"], max_size=1 << 22, ping_interval=None)
    await socket.send('{"type":"ping"}')
    await socket.recv()
    held.append(socket)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--subscribers", type=int, required=True)
    parser.add_argument("--server-pid", type=int, required=True)
    args = parser.parse_args()
    held = []
    await open_one(args.url, held)
    await asyncio.sleep(2)
    first = rss_kb(args.server_pid)
    remaining = args.subscribers - 1
    while remaining > 0:
        batch = min(200, remaining)
        await asyncio.gather(*(open_one(args.url, held) for _ in range(batch)))
        remaining -= batch
    await asyncio.sleep(2)
    idle = rss_kb(args.server_pid)
    print(json.dumps({"peer": "hummingbird-websocket", "subscribers": args.subscribers, "rss_first_kb": first, "rss_idle_kb": idle,
                      "rss_per_conn_kb": round((idle - first) / max(1, args.subscribers - 1), 2)}))
    for socket in held:
        await socket.close()


asyncio.run(main())
