#!/usr/bin/env python3
"""Drive Kizuna's data API over its WebSocket with gql, the Python GraphQL client, as an app team's client would.

Usage:
    gql_ws_client.py CONFIG_JSON

CONFIG_JSON (a file, or - for standard input) names the server, an app, a model of the app's live schema, and two
accounts with their access tokens:

    {"server": "http://127.0.0.1:8080", "app": "shop", "model": "Note",
     "users": {"a": {"id": "…", "token": "kzs_…"}, "b": {…}}}

The model's records are read by their owner alone (`@auth(rules: [{allow: owner}])`) and have a `text: String!` field
and no other required one, as `Note` of the schema GQLWebSocketClientTests publishes (DataMutationTests.schema).

gql's WebsocketsTransport speaks graphql-transport-ws to ws://…/v1/apps/{app}/graphql, with `authorization: Bearer
<token>` in the connection_init payload; it fetches the schema by introspection over the socket and validates every
document against it before sending it. Records are created over HTTP (gql's requests transport) as A and as B, and
over the socket. The checks:
  (a) A's onCreateX subscription hears A's creates and none of B's, in order, each with a greater extensions.seq;
  (b) after a disconnect and more creates, onCreateX(since: <the last seq heard>) replays exactly what A missed, then
      hears the next create live, none twice;
  (c) a mutation and queries sent over the socket are answered, under the same read rules as over HTTP;
  (d) a connection_init with a forged token is refused: the server closes the socket with 4403.
Each step prints what it checks; the first check that does not hold ends the run with exit 1 and a message saying what
was expected and what came back. Every wait for the server is bounded (WAIT seconds), so a missing delivery fails
rather than hangs. Exits 0 when every check holds, 2 for a bad CONFIG_JSON, and 77 when gql (4 or later, with its
websockets and requests transports) is missing, so the caller can report the test as skipped.
"""

import asyncio
import sys
import uuid
from contextlib import AsyncExitStack, ExitStack, suppress

from contract_checks import CheckFailed, check, load_config, show, step, tampered

try:
    import graphql
    import websockets.exceptions
    from gql import Client, GraphQLRequest, gql
    from gql.transport.exceptions import TransportConnectionFailed, TransportError, TransportQueryError
    from gql.transport.requests import RequestsHTTPTransport
    from gql.transport.websockets import WebsocketsTransport
except ImportError as missing:
    print(
        "gql 4 or later with its websockets and requests transports is not installed "
        f"(pip install 'gql[requests,websockets]>=4'): {missing}"
    )
    sys.exit(77)

WAIT = 30  # seconds any one answer or delivery may take before the check fails
RUN_LIMIT = 300  # seconds the whole run may take
FIELDS = "id text owner createdAt _version"


def documents(model):
    """The documents this script sends, by role, for `model`."""
    return {
        "Create": gql(
            f"mutation Create{model}($input: Create{model}Input!) {{ create{model}(input: $input) {{ {FIELDS} }} }}"
        ),
        "Get": gql(f"query Get{model}($id: ID!) {{ get{model}(id: $id) {{ {FIELDS} }} }}"),
        "OnCreate": gql(
            f"subscription OnCreate{model}($since: String) {{ onCreate{model}(since: $since) {{ {FIELDS} }} }}"
        ),
    }


def is_subscription(document):
    return any(
        isinstance(definition, graphql.OperationDefinitionNode)
        and definition.operation == graphql.OperationType.SUBSCRIPTION
        for definition in getattr(document, "definitions", [])
    )


class Transport(WebsocketsTransport):
    """gql's WebsocketsTransport on graphql-transport-ws, which also tells when it has sent a subscription's
    `subscribe` message.

    gql sends that message from the task that first iterates the subscription's generator, and has no hook for it; the
    script must know it went out before it sends the `ping` whose `pong` says the server has started the subscription
    (the server reads a connection's messages in order, and starts a subscription before it reads the next one).
    """

    def __init__(self, url, token):
        super().__init__(
            url=url,
            init_payload={"authorization": f"Bearer {token}"},
            subprotocols=[WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL],
            connect_timeout=WAIT,
            ack_timeout=WAIT,
            close_timeout=WAIT,
            connect_args={"max_size": 1 << 24},  # the introspection answer may pass websockets' 1 MiB default
        )
        self.subscribed = asyncio.Queue()  # the id of each subscription sent, in order

    async def _send_query(self, *args, **kwargs):
        query_id = await super()._send_query(*args, **kwargs)
        request = args[0] if args else kwargs.get("request")
        if is_subscription(getattr(request, "document", request)):
            self.subscribed.put_nowait(query_id)
        return query_id

    async def barrier(self):
        """Sends a `ping` with a fresh marker and waits for the `pong` that echoes it: the server has then handled every
        message sent before it."""
        marker = str(uuid.uuid4())
        self.pong_received.clear()
        await self.send_ping({"marker": marker})
        while True:
            try:
                await asyncio.wait_for(self.pong_received.wait(), WAIT)
            except asyncio.TimeoutError:
                raise CheckFailed(f"no pong within {WAIT}s for the ping with marker {marker}") from None
            self.pong_received.clear()
            if self.payloads.get("pong") == {"marker": marker}:
                return


class Delivery:
    """One `next` of a subscription: the record and its extensions.seq (a decimal string) as a number."""

    def __init__(self, record, seq):
        self.record, self.seq = record, seq

    @property
    def id(self):
        return self.record["id"]


class Feed:
    """One subscription of a gql WebSocket session, read by a task into a queue as its deliveries arrive."""

    def __init__(self, name, session, transport, request, field):
        self.name, self.session, self.transport, self.request, self.field = name, session, transport, request, field
        self.queue = asyncio.Queue()
        self.task = None

    async def open(self):
        """Subscribes, and returns once the server has started the subscription: what is created after is live."""
        self.task = asyncio.create_task(self._read())
        sent = asyncio.create_task(self.transport.subscribed.get())
        done, _ = await asyncio.wait({sent, self.task}, timeout=WAIT, return_when=asyncio.FIRST_COMPLETED)
        if sent not in done:
            sent.cancel()
            if self.task in done:
                await self.next("the subscribe")  # raises with what ended the subscription
            raise CheckFailed(f"{self.name}: gql did not send the subscribe within {WAIT}s")
        await self.transport.barrier()

    async def _read(self):
        try:
            async for result in self.session.subscribe(self.request, get_execution_result=True):
                await self.queue.put(result)
            await self.queue.put("the server completed the subscription")
        except asyncio.CancelledError:
            raise
        except Exception as error:  # handed to the reader, which fails the check with it
            await self.queue.put(error)

    async def next(self, what):
        """The next delivery, which must come within WAIT seconds and carry the record and a decimal extensions.seq."""
        try:
            item = await asyncio.wait_for(self.queue.get(), WAIT)
        except asyncio.TimeoutError:
            raise CheckFailed(f"{self.name}: {what}: nothing delivered within {WAIT}s") from None
        if isinstance(item, str):
            raise CheckFailed(f"{self.name}: {what}: {item}")
        if isinstance(item, TransportQueryError):
            raise CheckFailed(f"{self.name}: {what}: the subscription ended with errors\n    got: {show(item.errors)}")
        if isinstance(item, graphql.GraphQLError):
            raise CheckFailed(f"{self.name}: {what}: the live schema refuses the subscription: {item.message}")
        if isinstance(item, Exception):
            raise CheckFailed(f"{self.name}: {what}: the subscription failed: {type(item).__name__}: {item}")
        record = (item.data or {}).get(self.field)
        seq = (item.extensions or {}).get("seq")
        got = {"data": item.data, "extensions": item.extensions}
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise CheckFailed(f"{self.name}: {what}: a delivery without the {self.field} record\n    got: {show(got)}")
        if not (isinstance(seq, str) and seq.isdigit()):
            raise CheckFailed(f"{self.name}: {what}: extensions.seq is not a decimal string\n    got: {show(got)}")
        return Delivery(record, int(seq))

    async def close(self):
        """Stops the subscription as gql does: cancelling the task sends `complete`."""
        if self.task is not None:
            self.task.cancel()
            with suppress(asyncio.CancelledError, TransportError):
                await self.task


class Run:
    """The callers, the documents, and the records made so far (by label, such as `a0`)."""

    def __init__(self, config, http_stack, sockets):
        self.http_stack, self.sockets = http_stack, sockets
        self.model = config["model"]
        self.docs = documents(self.model)
        server = config["server"].rstrip("/")
        path = f"/v1/apps/{config['app']}/graphql"
        self.http_url = server + path
        scheme, rest = server.split("://", 1)
        self.ws_url = f"{'wss' if scheme == 'https' else 'ws'}://{rest}{path}"
        self.users = config["users"]
        self.schema = None
        self.http = {}  # name → a gql session over HTTP
        self.records = {}  # label → record as created
        self.labels = {}  # id → label

    def label(self, record_id):
        return self.labels.get(record_id, record_id)

    def labelled(self, deliveries):
        return [self.label(delivery.id) for delivery in deliveries]

    async def socket(self, name, fetch_schema=False):
        """A gql session over a new WebSocket, signed in as user `name`, and its transport; closed by the scope it
        also answers, which the run closes at the latest when it ends."""
        transport = Transport(self.ws_url, self.users[name]["token"])
        if fetch_schema:
            client = Client(transport=transport, fetch_schema_from_transport=True, execute_timeout=WAIT)
        else:
            client = Client(transport=transport, schema=self.schema, execute_timeout=WAIT)
        scope = await self.sockets.enter_async_context(AsyncExitStack())
        session = await scope.enter_async_context(client)
        if fetch_schema:
            self.schema = client.schema
        return session, transport, scope

    def feed(self, name, session, transport, since=None):
        request = GraphQLRequest(self.docs["OnCreate"], variable_values=None if since is None else {"since": since})
        return Feed(name, session, transport, request, f"onCreate{self.model}")

    def http_session(self, name):
        if name not in self.http:
            headers = {"Authorization": f"Bearer {self.users[name]['token']}"}
            transport = RequestsHTTPTransport(url=self.http_url, headers=headers, timeout=WAIT, retries=0)
            self.http[name] = self.http_stack.enter_context(Client(transport=transport, schema=self.schema))
        return self.http[name]

    def create_request(self, label):
        """A createX request for a new record, under an id of the client's, with text `label`."""
        return GraphQLRequest(self.docs["Create"], variable_values={"input": {"id": str(uuid.uuid4()), "text": label}})

    def created(self, name, label, record):
        """Checks what a createX answered for user `name`, and keeps it under `label`."""
        check(
            isinstance(record, dict) and record.get("text") == label and record.get("owner") == self.users[name]["id"],
            f"{name.upper()} creates {label} (owned by {name.upper()})",
            record,
        )
        self.records[label] = record
        self.labels[record["id"]] = label
        return record

    async def create_over_http(self, name, label):
        """Creates a record with text `label` as user `name` through POST /v1/apps/{app}/graphql."""
        answer = asyncio.to_thread(self.http_session(name).execute, self.create_request(label))
        data = await execute(f"create{self.model} over HTTP ({name.upper()})", answer)
        return self.created(name, label, data[f"create{self.model}"])


async def execute(what, answer):
    """The data of an answer; a GraphQL error or a document the live schema refuses ends the run, naming the call."""
    try:
        return await answer
    except TransportQueryError as error:
        raise CheckFailed(f"{what}: expected success\n    got errors: {show(error.errors)}") from None
    except graphql.GraphQLError as refused:
        raise CheckFailed(f"{what}: the live schema refuses the document: {refused.message}") from None
    except asyncio.TimeoutError:
        raise CheckFailed(f"{what}: no answer within {WAIT}s") from None


def documents_match(run):
    step("gql connects as A with graphql-transport-ws and builds the schema by introspection over the socket")
    check(run.schema is not None, "the introspection answer builds a schema")
    problems = {
        role: [error.message for error in graphql.validate(run.schema, request.document)]
        for role, request in run.docs.items()
    }
    problems = {role: messages for role, messages in problems.items() if messages}
    check(not problems, f"the {len(run.docs)} documents this script sends are valid against it", problems)


def increasing(deliveries):
    seqs = [delivery.seq for delivery in deliveries]
    return all(earlier < later for earlier, later in zip(seqs, seqs[1:]))


async def live(run, a):
    step(f"A's onCreate{run.model} hears A's creates, not B's, in order with increasing extensions.seq")
    session, transport, _ = a
    feed = run.feed("A's subscription", session, transport)
    await feed.open()
    print("   (the server answered a ping sent after the subscribe: the subscription is live)")
    for index in range(3):
        await run.create_over_http("b", f"b{index}")
        await run.create_over_http("a", f"a{index}")
    # B's creates come before A's last in the log: had any been delivered, it would come before a2.
    heard = []
    while not heard or heard[-1].id != run.records["a2"]["id"]:
        heard.append(await feed.next(f"waiting for a2 (heard {run.labelled(heard)} so far)"))
        if len(heard) > 6:
            break
    check(run.labelled(heard) == ["a0", "a1", "a2"], "A hears exactly a0, a1, a2, in that order", run.labelled(heard))
    check(
        [delivery.record for delivery in heard] == [run.records[label] for label in ("a0", "a1", "a2")],
        "  each delivery is the record as its create answered",
        [delivery.record for delivery in heard],
    )
    seqs = [delivery.seq for delivery in heard]
    check(increasing(heard), f"  with increasing extensions.seq {seqs}", seqs)
    await feed.close()
    return heard[-1].seq


async def resume(run, since):
    step(f"while A is away, a3, b3, a4 are created; A reconnects with onCreate{run.model}(since: \"{since}\")")
    await run.create_over_http("a", "a3")
    await run.create_over_http("b", "b3")
    await run.create_over_http("a", "a4")
    session, transport, _ = await run.socket("a")
    feed = run.feed("A's resumed subscription", session, transport, since=str(since))
    await feed.open()
    replayed = [await feed.next("replaying a3"), await feed.next("replaying a4")]
    check(run.labelled(replayed) == ["a3", "a4"], "it replays exactly what A missed: a3, a4", run.labelled(replayed))
    await run.create_over_http("a", "a5")
    later = await feed.next("a5, created after the replay")
    heard = replayed + [later]
    check(run.labelled([later]) == ["a5"], "then hears a5 live, nothing between", run.labelled(heard))
    seqs = [delivery.seq for delivery in heard]
    check(increasing(heard) and seqs[0] > since, f"  every extensions.seq is after {since}, increasing: {seqs}", seqs)
    return session, transport, feed


async def over_the_socket(run, session, feed):
    step("a mutation and queries over the socket: answered, under the read rules; the subscription hears the create")
    model = run.model
    data = await execute(f"create{model} over the socket (A)", session.execute(run.create_request("a6")))
    created = run.created("a", "a6", data[f"create{model}"])
    check(created["_version"] == 1, f"  create{model} over the socket answers the new record at _version 1", created)
    delivery = await feed.next("a6, created over the socket")
    check(run.labelled([delivery]) == ["a6"], "A's subscription hears a6 next, nothing between", delivery.record)
    got = await execute(
        f"get{model} over the socket (A)",
        session.execute(GraphQLRequest(run.docs["Get"], variable_values={"id": created["id"]})),
    )
    check(got[f"get{model}"] == created, f"get{model} over the socket answers a6 as created", got)
    hidden = await execute(
        f"get{model} of B's record over the socket (A)",
        session.execute(GraphQLRequest(run.docs["Get"], variable_values={"id": run.records["b0"]["id"]})),
    )
    check(hidden[f"get{model}"] is None, f"get{model} of B's b0 over the socket is null for A", hidden)


def close_frame(error):
    """The close frame the server sent, found in the chain of exceptions gql raised, or None."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, websockets.exceptions.ConnectionClosed):
            return error.rcvd
        error = error.__cause__ or error.__context__
    return None


async def forged(run):
    step("a connection_init with a forged token is refused: the socket closes with 4403")
    transport = Transport(run.ws_url, tampered(run.users["a"]["token"]))
    client = Client(transport=transport, schema=run.schema, execute_timeout=WAIT)
    try:
        async with client as session:
            data = await session.execute(run.create_request("never"))
    except TransportConnectionFailed as error:
        frame = close_frame(error)
        what = "gql's connect raises TransportConnectionFailed: the server closed with 4403, reason session_expired"
        got = {"error": repr(error), "close": None if frame is None else {"code": frame.code, "reason": frame.reason}}
        check(frame is not None and frame.code == 4403 and frame.reason == "session_expired", what, got)
        return
    except TransportError as error:
        raise CheckFailed(f"expected TransportConnectionFailed with close code 4403\n    got: {error!r}") from None
    raise CheckFailed(f"expected the connection to be refused with 4403\n    got an acknowledged session: {show(data)}")


async def exercise(config):
    # The sockets close before the HTTP sessions.
    with ExitStack() as http_stack:
        async with AsyncExitStack() as sockets:
            run = Run(config, http_stack, sockets)
            first = await run.socket("a", fetch_schema=True)
            documents_match(run)
            last = await live(run, first)
            step("A disconnects")
            await first[2].aclose()
            print("   ok  gql closed the socket")
            session, _, feed = await resume(run, last)
            await over_the_socket(run, session, feed)
            await feed.close()
            await forged(run)


def load(argument):
    def validate(config):
        for key in ("server", "app", "model"):
            if not isinstance(config[key], str) or not config[key]:
                raise TypeError(f"{key} must be a non-empty string")
        if not config["server"].startswith(("http://", "https://")):
            raise ValueError("server must be an http:// or https:// URL")

    return load_config(argument, ("a", "b"), validate, __doc__)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    config = load(sys.argv[1])
    try:
        asyncio.run(asyncio.wait_for(exercise(config), RUN_LIMIT))
    except CheckFailed as failure:
        print(f"\nFAILED: {failure}")
        return 1
    except asyncio.TimeoutError:
        print(f"\nFAILED: the run took longer than {RUN_LIMIT}s")
        return 1
    except TransportError as error:
        # No connection, an answer that is not GraphQL, a socket closed under a session, or a failed introspection.
        cause = f" ({error.__cause__!r})" if error.__cause__ is not None else ""
        print(f"\nFAILED: {type(error).__name__}: {error}{cause}")
        return 1
    print("\nok: every check held")
    return 0


if __name__ == "__main__":
    sys.exit(main())
