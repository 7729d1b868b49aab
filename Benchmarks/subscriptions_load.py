#!/usr/bin/env python3
"""Load generator of Benchmarks/subscriptions.sh: N subscribers that each receive every message of a stream.

One asyncio process (the script pins it to CPU 1) opens N subscribers, then publishes RATE messages a second for
SECONDS seconds and times every delivery; it prints one JSON line with the figures on standard output.

  --peer kizuna     N WebSockets (the `websockets` package) to ws://HOST:PORT/v1/apps/APP/graphql, subprotocol
                    graphql-transport-ws: connection_init with the API key in `x-api-key`, connection_ack, subscribe
                    `subscription { onCreateTick { id sent body } }`, then a ping whose pong says the subscription is
                    live (the server reads a connection's frames in order and starts a subscription before reading the
                    next one). Server pings are answered with pongs. The publisher POSTs
                    `mutation($input: CreateTickInput!) { createTick(input: $input) { id } }` to
                    http://HOST:PORT/v1/apps/APP/graphql with the same key, over keep-alive HTTP/1.1 connections.
  --peer mosquitto  N MQTT 3.1.1 clients (a small hand-written asyncio client: CONNECT/CONNACK, SUBSCRIBE/SUBACK,
                    PUBLISH QoS 0, PINGREQ/PINGRESP) subscribed to bench/ticks at QoS 0; the publisher, an MQTT client
                    too, publishes QoS 0 to that topic.

Both peers get the same payload: the record `{"id": <uuid>, "sent": "<time.time_ns() at send>", "body": "<padding>"}`,
which kizuna stores and sends back as `data.onCreateTick` inside a `next` message, and which the MQTT publisher
publishes as is. A delivery's latency is its receipt time (time.time_ns() when the client library hands the message
over) minus `sent`, taken just before the mutation request (or the PUBLISH) is written: for kizuna an upper bound
on commit-to-receipt, since the request still has to be read, run and committed. Same host, same clock.

Each subscriber has its own reader task on both sides, so both pay the same asyncio overhead per delivery; the
figure `client_cpu_us_per_delivery` says what the receiving side costs this process (it is on one core: at
1e6 / that many deliveries a second the generator, not the server, is the bottleneck).

Phases: open one subscriber and wait --settle seconds (what the server sets up once, such as loading the app's
schema, is not counted as the connections' cost); RSS of --server-pid (VmRSS of /proc/PID/status); open the other
N - 1, BATCH at a time; wait --settle seconds; RSS again (idle: every connection open and subscribed, nothing
flowing), and rss_per_conn_kb = the difference ÷ (N - 1); --warmup messages, each waited for by every subscriber,
not counted; the measured stream (the garbage collector off); drain until every delivery arrived or --drain-idle
seconds pass without one; RSS after. The connections are then aborted (the script stops the server after each turn).
"""

import argparse
import array
import asyncio
import gc
import json
import math
import os
import socket
import sys
import time
import uuid

TOPIC = "bench/ticks"
SUBSCRIPTION = "subscription { onCreateTick { id sent body } }"
MUTATION = "mutation($input: CreateTickInput!) { createTick(input: $input) { id } }"


def rss_kb(pid):
    """VmRSS of a process in kB (KiB, as /proc writes it), or None without a pid."""
    if not pid:
        return None
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def percentile(ordered, q):
    """Nearest-rank percentile of an ascending sequence."""
    if not ordered:
        return None
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


class Stats:
    """What the subscribers heard. Message ids map to their index in the stream; warm-up ids are negative."""

    def __init__(self, subscribers):
        self.subscribers = subscribers
        self.index = {}  # record id → message index (warm-up: -1 - i)
        self.latencies = array.array("q")  # ns, measured messages only
        self.per_message = {}  # index → deliveries so far
        self.slowest = {}  # index → latest latency (ns)
        self.warmup = {}  # warm-up index → deliveries
        self.last_receipt = 0
        self.progress = asyncio.Event()
        self.closed = {}  # close code or reason → connections
        self.errors = []  # unexpected messages (first few)
        self.unknown = 0  # deliveries of ids this run did not publish

    def delivered(self, record_id, sent_ns, now):
        index = self.index.get(record_id)
        if index is None:
            self.unknown += 1
            return
        if index < 0:
            self.warmup[index] = self.warmup.get(index, 0) + 1
        else:
            latency = now - sent_ns
            self.latencies.append(latency)
            self.per_message[index] = self.per_message.get(index, 0) + 1
            if latency > self.slowest.get(index, 0):
                self.slowest[index] = latency
            self.last_receipt = now
        self.progress.set()

    def closed_with(self, why):
        self.closed[why] = self.closed.get(why, 0) + 1
        self.progress.set()

    def error(self, text):
        if len(self.errors) < 5:
            self.errors.append(text[:300])


def record_payload(record_id, sent_ns, body):
    return {"id": record_id, "sent": str(sent_ns), "body": body}


# ---------------------------------------------------------------------------------------------------------------
# kizuna: graphql-transport-ws subscribers, HTTP publisher


class KizunaPeer:
    def __init__(self, args, stats):
        self.args = args
        self.stats = stats
        self.ws_url = f"ws://{args.host}:{args.port}/v1/apps/{args.app}/graphql"
        self.path = f"/v1/apps/{args.app}/graphql"
        self.connections = []
        self.readers = []
        self.http = None  # asyncio.Queue of (reader, writer)
        self.last_sent = 0  # time.time_ns() of the latest send

    async def open_subscriber(self):
        from websockets.asyncio.client import connect

        ws = await connect(
            self.ws_url,
            subprotocols=["graphql-transport-ws"],
            compression=None,
            ping_interval=None,  # graphql-transport-ws has its own keep-alive: the server's `ping` messages
            open_timeout=60,
            close_timeout=1,
            max_size=2**20,
            max_queue=64,
        )
        try:
            if ws.subprotocol != "graphql-transport-ws":
                raise RuntimeError(f"server chose subprotocol {ws.subprotocol!r}")
            await ws.send(json.dumps({"type": "connection_init", "payload": {"x-api-key": self.args.api_key}}))
            await self.expect(ws, "connection_ack")
            await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {"query": SUBSCRIPTION}}))
            await ws.send('{"type":"ping"}')
            await self.expect(ws, "pong")
        except BaseException:
            ws.transport.abort()
            raise
        self.connections.append(ws)
        self.readers.append(asyncio.create_task(self.read(ws)))

    @staticmethod
    async def expect(ws, kind):
        while True:
            message = json.loads(await ws.recv())
            if message.get("type") == kind:
                return
            if message.get("type") == "ping":
                await ws.send('{"type":"pong"}')
                continue
            raise RuntimeError(f"expected {kind}, got {message}")

    async def read(self, ws):
        from websockets.exceptions import ConnectionClosed

        stats = self.stats
        try:
            while True:
                text = await ws.recv()
                now = time.time_ns()
                message = json.loads(text)
                kind = message.get("type")
                if kind == "next":
                    record = (message["payload"].get("data") or {}).get("onCreateTick")
                    if record is None:
                        stats.error(text)
                        continue
                    stats.delivered(record["id"], int(record["sent"]), now)
                elif kind == "ping":
                    await ws.send('{"type":"pong"}')
                elif kind == "pong":
                    pass
                else:
                    stats.error(text)
        except ConnectionClosed as closed:
            rcvd = closed.rcvd
            stats.closed_with(f"ws {rcvd.code} {rcvd.reason}" if rcvd else "ws closed without a close frame")
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 — reported, not raised: one bad connection must not end the run
            stats.closed_with(f"reader failed: {error!r}")

    async def open_publisher(self):
        """Fresh keep-alive connections for a phase (an idle one may have passed the server's idle timeout)."""
        self.close_publisher()
        self.http = asyncio.Queue()
        for _ in range(self.args.publisher_connections):
            reader, writer = await asyncio.open_connection(self.args.host, self.args.port)
            writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.http.put_nowait((reader, writer))

    async def publish(self, record_id, body):
        """One createTick; returns an error text or None."""
        reader, writer = await self.http.get()
        try:
            sent = self.last_sent = time.time_ns()
            payload = json.dumps(
                {"query": MUTATION, "variables": {"input": record_payload(record_id, sent, body)}},
                separators=(",", ":"),
            ).encode()
            head = (
                f"POST {self.path} HTTP/1.1\r\nHost: {self.args.host}:{self.args.port}\r\n"
                f"Content-Type: application/json\r\nX-Api-Key: {self.args.api_key}\r\n"
                f"Content-Length: {len(payload)}\r\n\r\n"
            ).encode()
            writer.write(head + payload)
            status, answer = await read_http_response(reader)
            if status != 200 or b'"errors"' in answer:
                return f"HTTP {status}: {answer[:300]!r}"
            return None
        finally:
            self.http.put_nowait((reader, writer))

    def close_publisher(self):
        if self.http:
            while not self.http.empty():
                self.http.get_nowait()[1].transport.abort()

    def abort(self):
        for task in self.readers:
            task.cancel()
        for ws in self.connections:
            ws.transport.abort()
        self.close_publisher()


async def read_http_response(reader):
    """Status and body of one HTTP/1.1 response (Content-Length or chunked)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        return status, await reader.readexactly(int(headers["content-length"]))
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                return status, body
            body += chunk[:-2]
    raise RuntimeError(f"response without a length: {head!r}")


# ---------------------------------------------------------------------------------------------------------------
# mosquitto: MQTT 3.1.1 subscribers and publisher


def mqtt_length(n):
    out = bytearray()
    while True:
        byte, n = n % 128, n // 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def mqtt_string(text):
    data = text.encode()
    return len(data).to_bytes(2, "big") + data


def mqtt_connect(client_id, keepalive):
    variable = mqtt_string("MQTT") + bytes([4, 0x02]) + keepalive.to_bytes(2, "big")  # 3.1.1, clean session
    body = variable + mqtt_string(client_id)
    return bytes([0x10]) + mqtt_length(len(body)) + body


def mqtt_subscribe(packet_id, topic):
    body = packet_id.to_bytes(2, "big") + mqtt_string(topic) + bytes([0])  # QoS 0
    return bytes([0x82]) + mqtt_length(len(body)) + body


def mqtt_publish(topic, payload):
    body = mqtt_string(topic) + payload  # QoS 0: no packet id
    return bytes([0x30]) + mqtt_length(len(body)) + body


PINGREQ = bytes([0xC0, 0])
DISCONNECT = bytes([0xE0, 0])


def mqtt_packets(buffer):
    """Complete packets at the front of buffer, as (first byte, body), and how many bytes they took."""
    packets = []
    offset = 0
    size = len(buffer)
    while offset + 2 <= size:
        first = buffer[offset]
        length = 0
        multiplier = 1
        position = offset + 1
        while True:
            if position >= size:
                return packets, offset
            byte = buffer[position]
            position += 1
            length += (byte & 0x7F) * multiplier
            multiplier *= 128
            if not byte & 0x80:
                break
        if position + length > size:
            return packets, offset
        packets.append((first, bytes(buffer[position : position + length])))
        offset = position + length
    return packets, offset


async def mqtt_read_packet(reader, buffer):
    """One packet, reading more as needed (for the handshakes, before the reader task takes over); what follows it
    stays in buffer."""
    while True:
        packets, _ = mqtt_packets(buffer)
        if packets:
            first, body = packets[0]
            del buffer[: 1 + len(mqtt_length(len(body))) + len(body)]
            return first, body
        data = await reader.read(65536)
        if not data:
            raise ConnectionError("closed by the broker")
        buffer += data


class MosquittoPeer:
    KEEPALIVE = 120  # s; a PINGREQ goes to every subscriber each KEEPALIVE / 2

    def __init__(self, args, stats):
        self.args = args
        self.stats = stats
        self.connections = []  # (reader, writer)
        self.readers = []
        self.publisher = None
        self.pinger = None
        self.serial = 0
        self.last_sent = 0  # time.time_ns() of the latest send

    async def connect(self, name):
        reader, writer = await asyncio.open_connection(self.args.host, self.args.port)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buffer = bytearray()
        writer.write(mqtt_connect(name, self.KEEPALIVE))
        first, body = await mqtt_read_packet(reader, buffer)
        if first != 0x20 or len(body) != 2 or body[1] != 0:
            writer.transport.abort()
            raise RuntimeError(f"CONNACK refused: {first:#x} {body!r}")
        return reader, writer, buffer

    async def open_subscriber(self):
        self.serial += 1
        reader, writer, buffer = await self.connect(f"bench-sub-{os.getpid()}-{self.serial}")
        try:
            writer.write(mqtt_subscribe(1, TOPIC))
            first, body = await mqtt_read_packet(reader, buffer)
            if first != 0x90 or body[2:] != b"\x00":
                raise RuntimeError(f"SUBACK refused: {first:#x} {body!r}")
        except BaseException:
            writer.transport.abort()
            raise
        self.connections.append((reader, writer))
        self.readers.append(asyncio.create_task(self.read(reader, bytes(buffer))))
        if self.pinger is None:
            self.pinger = asyncio.create_task(self.ping_all())

    async def read(self, reader, pending):
        stats = self.stats
        buffer = bytearray(pending)
        now = time.time_ns()
        try:
            while True:
                packets, used = mqtt_packets(buffer)
                del buffer[:used]
                for first, body in packets:
                    kind = first >> 4
                    if kind == 3:  # PUBLISH, QoS 0: topic, then the payload
                        topic_length = int.from_bytes(body[:2], "big")
                        record = json.loads(body[2 + topic_length :])
                        stats.delivered(record["id"], int(record["sent"]), now)
                    elif kind == 13:  # PINGRESP
                        pass
                    else:
                        stats.error(f"MQTT packet {first:#x} {body[:100]!r}")
                data = await reader.read(65536)
                now = time.time_ns()
                if not data:
                    stats.closed_with("mqtt closed by the broker")
                    return
                buffer += data
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001
            stats.closed_with(f"reader failed: {error!r}")

    async def ping_all(self):
        while True:
            await asyncio.sleep(self.KEEPALIVE / 2)
            for _, writer in list(self.connections):
                if not writer.is_closing():
                    writer.write(PINGREQ)
            if self.publisher and not self.publisher[1].is_closing():
                self.publisher[1].write(PINGREQ)

    async def open_publisher(self):
        """A fresh publisher for a phase, as for kizuna."""
        if self.publisher:
            self.publisher[1].transport.abort()
        self.serial += 1
        reader, writer, _ = await self.connect(f"bench-pub-{os.getpid()}-{self.serial}")
        self.publisher = (reader, writer)
        # Drain whatever the broker sends the publisher (PINGRESP), so its socket never fills.
        self.readers.append(asyncio.create_task(self.discard(reader)))

    @staticmethod
    async def discard(reader):
        try:
            while await reader.read(65536):
                pass
        except ConnectionError:
            pass

    async def publish(self, record_id, body):
        writer = self.publisher[1]
        sent = self.last_sent = time.time_ns()
        payload = json.dumps(record_payload(record_id, sent, body), separators=(",", ":")).encode()
        writer.write(mqtt_publish(TOPIC, payload))
        await writer.drain()
        return None

    def abort(self):
        if self.pinger:
            self.pinger.cancel()
        for task in self.readers:
            task.cancel()
        for _, writer in self.connections:
            writer.transport.abort()
        if self.publisher:
            self.publisher[1].transport.abort()


# ---------------------------------------------------------------------------------------------------------------


async def open_all(peer, count, batch):
    """Opens count subscribers, at most batch at a time; fails when any could not be opened."""
    semaphore = asyncio.Semaphore(batch)
    started = time.monotonic()
    opened = 0

    async def one():
        nonlocal opened
        async with semaphore:
            await peer.open_subscriber()
            opened += 1
            if opened % 1000 == 0:
                print(f"  {opened}/{count} subscribers open ({time.monotonic() - started:.1f} s)", file=sys.stderr)

    results = await asyncio.gather(*(one() for _ in range(count)), return_exceptions=True)
    failures = [result for result in results if isinstance(result, BaseException)]
    if failures:
        raise RuntimeError(f"{len(failures)} of {count} subscribers could not be opened; first: {failures[0]!r}")
    return time.monotonic() - started


async def stream(peer, stats, count, rate, label):
    """Publishes count messages at rate a second (each in its own task, so a slow answer does not hold the schedule
    up); returns the ids in order and the publish failures."""
    ids = []
    failures = []
    tasks = []
    body = label + "x" * (peer.args.body_bytes - len(label))
    start = time.monotonic()
    for i in range(count):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        record_id = str(uuid.uuid4())
        stats.index[record_id] = i if label == "M" else -1 - i
        ids.append(record_id)
        tasks.append(asyncio.create_task(peer.publish(record_id, body)))
    for result in await asyncio.gather(*tasks, return_exceptions=True):
        if result is not None:
            failures.append(repr(result) if isinstance(result, BaseException) else result)
    return ids, failures


async def wait_until(done, stats, idle, limit):
    """Waits until done() holds, or idle seconds pass without a delivery, or limit seconds in all."""
    deadline = time.monotonic() + limit
    while not done():
        stats.progress.clear()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        try:
            await asyncio.wait_for(stats.progress.wait(), timeout=min(idle, remaining))
        except asyncio.TimeoutError:
            return done()
    return True


async def run(args):
    stats = Stats(args.subscribers)
    peer = KizunaPeer(args, stats) if args.peer == "kizuna" else MosquittoPeer(args, stats)
    result = {
        "peer": args.peer,
        "subscribers": args.subscribers,
        "rate": args.rate,
        "seconds": args.seconds,
        "round": args.round,
    }
    try:
        # The first subscriber opens alone, before the first RSS: what the server sets up once (the app's schema
        # loaded, caches, buffers, pools) is not counted as the connections' cost. It stays open and subscribed, so
        # the RSS difference is that of the other N - 1.
        setup = await open_all(peer, 1, 1)
        await asyncio.sleep(args.settle)
        result["rss_before_kb"] = rss_kb(args.server_pid)
        setup += await open_all(peer, args.subscribers - 1, args.batch)
        result["setup_s"] = round(setup, 2)
        await asyncio.sleep(args.settle)
        result["rss_idle_kb"] = rss_kb(args.server_pid)
        if args.server_pid and args.subscribers > 1:
            grown = result["rss_idle_kb"] - result["rss_before_kb"]
            result["rss_per_conn_kb"] = round(grown / (args.subscribers - 1), 2)
        # The connections' objects are long-lived: keep the collector from walking them during the stream.
        gc.collect()
        gc.freeze()
        if stats.closed:
            raise RuntimeError(f"subscribers closed before the stream: {stats.closed}")

        # Warm-up: each message waited for by every subscriber.
        await peer.open_publisher()
        _, warm_failures = await stream(peer, stats, args.warmup, args.rate, "W")
        if warm_failures:
            raise RuntimeError(f"warm-up publishes failed: {warm_failures[:3]}")
        expected_warm = args.warmup * args.subscribers
        warmed = await wait_until(lambda: sum(stats.warmup.values()) >= expected_warm, stats, args.drain_idle, 300)
        result["warmup_delivered"] = sum(stats.warmup.values())
        if not warmed:
            print(f"  warm-up: {result['warmup_delivered']} of {expected_warm} delivered", file=sys.stderr)
        await asyncio.sleep(1)

        messages = max(1, round(args.rate * args.seconds))
        expected = messages * args.subscribers
        await peer.open_publisher()
        gc.disable()
        cpu_before = time.process_time()
        first_send = time.time_ns()
        ids, failures = await stream(peer, stats, messages, args.rate, "M")
        complete = await wait_until(lambda: len(stats.latencies) >= expected, stats, args.drain_idle, args.drain_max)
        cpu = time.process_time() - cpu_before
        gc.enable()
        result["rss_after_kb"] = rss_kb(args.server_pid)

        delivered = len(stats.latencies)
        ordered = sorted(stats.latencies)
        slowest = sorted(stats.slowest.values())
        span = (stats.last_receipt - first_send) / 1e9 if delivered else None
        result.update(
            {
                "messages": messages,
                "payload_bytes": len(
                    json.dumps(record_payload(ids[0], time.time_ns(), "M" * args.body_bytes), separators=(",", ":"))
                ),
                "expected": expected,
                "delivered": delivered,
                "complete": complete and delivered == expected,
                "p50_ms": round(percentile(ordered, 0.50) / 1e6, 3) if ordered else None,
                "p99_ms": round(percentile(ordered, 0.99) / 1e6, 3) if ordered else None,
                "max_ms": round(ordered[-1] / 1e6, 3) if ordered else None,
                # Per message, the latency of its last delivery (the whole fan-out), median over the messages.
                "fanout_p50_ms": round(percentile(slowest, 0.50) / 1e6, 3) if slowest else None,
                "delivered_per_s": round(delivered / span, 1) if span else None,
                # When the last message was sent, from the first: (messages - 1) / rate unless publishing lagged.
                "last_send_s": round((peer.last_sent - first_send) / 1e9, 3),
                "client_cpu_us_per_delivery": round(cpu / delivered * 1e6, 1) if delivered else None,
                "publish_failures": len(failures),
                "closed": stats.closed,
                "unexpected": stats.errors,
                "unknown_ids": stats.unknown,
            }
        )
        if failures:
            print(f"  publish failures: {failures[:3]}", file=sys.stderr)
    finally:
        peer.abort()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peer", choices=["kizuna", "mosquitto"], required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--app", default="bench-app", help="kizuna: the app")
    parser.add_argument("--api-key", help="kizuna: an API key of the app (the model's rule is `allow: public`)")
    parser.add_argument("--subscribers", type=int, required=True)
    parser.add_argument("--rate", type=float, default=10, help="messages a second")
    parser.add_argument("--seconds", type=float, default=10, help="how long the measured stream lasts")
    parser.add_argument("--warmup", type=int, default=3, help="messages before the measured ones, not counted")
    parser.add_argument("--body-bytes", type=int, default=128, help="length of the record's body field")
    parser.add_argument("--batch", type=int, default=200, help="subscribers opening at once")
    parser.add_argument("--settle", type=float, default=2, help="seconds between the last subscriber and the idle RSS")
    parser.add_argument("--drain-idle", type=float, default=10, help="give up after these seconds without a delivery")
    parser.add_argument("--drain-max", type=float, default=300, help="give up after this many seconds in all")
    parser.add_argument("--publisher-connections", type=int, default=4, help="kizuna: keep-alive HTTP connections")
    parser.add_argument("--server-pid", type=int, help="the server process, for RSS")
    parser.add_argument("--round", type=int, default=0, help="recorded in the output")
    args = parser.parse_args()
    if args.peer == "kizuna" and not args.api_key:
        parser.error("--peer kizuna needs --api-key")
    if args.body_bytes < 1:
        parser.error("--body-bytes must be at least 1")
    if args.peer == "kizuna":
        import websockets

        if int(websockets.__version__.split(".")[0]) < 13:
            sys.exit(f"websockets {websockets.__version__} is too old: need 13 or later (pip install -U websockets)")
    result = asyncio.run(run(args))
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
