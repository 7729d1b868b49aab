"""aioapns (PyPI) sending N notifications to the local APNs, as Benchmarks/push.sh's peer: the same payload to the
same tokens at the same endpoint kizuna sends to. Prints notifications per second on standard output.

    python3 push_aioapns.py PORT CA_FILE KEY_FILE KEY_ID TEAM_ID TOPIC COUNT [CONCURRENCY]
"""
import asyncio
import ssl
import sys
import time

import aioapns.connection
from aioapns import APNs, NotificationRequest


async def main() -> None:
    port, ca, key, key_id, team_id, topic, count = sys.argv[1:8]
    concurrency = int(sys.argv[8]) if len(sys.argv) > 8 else 1000
    count = int(count)
    # aioapns connects to api.push.apple.com:443; the same endpoint kizuna is given instead.
    aioapns.connection.APNsProductionClientProtocol.APNS_SERVER = "127.0.0.1"
    aioapns.connection.APNsProductionClientProtocol.APNS_PORT = int(port)
    context = ssl.create_default_context(cafile=ca)
    context.set_alpn_protocols(["h2"])
    with open(key) as file:
        key_text = file.read()  # aioapns 4 takes the key's text
    client = APNs(key=key_text, key_id=key_id, team_id=team_id, topic=topic, use_sandbox=False, ssl_context=context)
    tokens = [format(n + 0x3000, "064x") for n in range(1, count + 1)]
    gate = asyncio.Semaphore(concurrency)
    failures = 0

    async def send(token: str) -> None:
        nonlocal failures
        async with gate:
            result = await client.send_notification(
                NotificationRequest(device_token=token, message={"aps": {"alert": {"body": "Benchmark"}}}, collapse_key="bench"))
            if not result.is_successful:
                failures += 1

    await send(tokens[0])  # connected and authenticated before the clock starts, as kizuna's connection is
    started = time.perf_counter()
    await asyncio.gather(*(send(token) for token in tokens))
    elapsed = time.perf_counter() - started
    print(f"{count / elapsed:.0f}")
    print(f"aioapns: {count} in {elapsed:.2f} s, {failures} failed", file=sys.stderr)


asyncio.run(main())
