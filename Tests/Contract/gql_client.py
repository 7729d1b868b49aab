#!/usr/bin/env python3
"""Drive Kizuna's data API with gql, the Python GraphQL client, as an app team's tooling would.

Usage:
    gql_client.py CONFIG_JSON

CONFIG_JSON (a file, or - for standard input) names the endpoint of an app that has published the chat example's
schema (Examples/Chat/schema.graphql) with gql_chat.graphql (next to this script) appended, an API key of that app,
and three accounts with their access tokens:

    {"url": "http://127.0.0.1:8080/v1/apps/shop/graphql",
     "apiKey": "kzk_…",
     "users": {"a": {"id": "…", "token": "kzs_…"}, "b": {…}, "c": {…}}}

A makes a room with B; C is in none. gql fetches the schema by introspection and validates every document against it
before sending it. Each step prints what it checks; the first check that does not hold ends the run with exit 1 and a
message saying what was expected and what came back. Exits 0 when every check holds, 2 for a bad CONFIG_JSON, and 77
when gql (4 or later, with its requests transport) is missing, so the caller can report the test as skipped.
"""

import sys
import uuid
from contextlib import ExitStack
from datetime import datetime

from contract_checks import CheckFailed, check, load_config, show, step, tampered

try:
    import graphql
    from gql import Client, GraphQLRequest, gql
    from gql.transport.exceptions import TransportError, TransportQueryError
    from gql.transport.requests import RequestsHTTPTransport
except ImportError as missing:
    print(f"gql 4 or later with its requests transport is not installed (pip install 'gql[requests]'): {missing}")
    sys.exit(77)

ROOM_FIELDS = "fragment RoomFields on Room { id name members createdAt updatedAt _version _deleted }"
MESSAGE_FIELDS = "fragment MessageFields on Message { id roomId text owner createdAt updatedAt _version _deleted }"

# Every document this script sends, by operation name; each is validated against the live schema before any is sent.
DOCUMENTS = {
    "CreateRoom": gql(
        "mutation CreateRoom($input: CreateRoomInput!) { createRoom(input: $input) { ...RoomFields } }" + ROOM_FIELDS
    ),
    "CreateMessage": gql("""
        mutation CreateMessage($input: CreateMessageInput!) { createMessage(input: $input) { ...MessageFields } }
        """ + MESSAGE_FIELDS),
    "UpdateMessage": gql("""
        mutation UpdateMessage($input: UpdateMessageInput!, $condition: ModelMessageConditionInput) {
          updateMessage(input: $input, condition: $condition) { ...MessageFields }
        }
        """ + MESSAGE_FIELDS),
    "DeleteMessage": gql("""
        mutation DeleteMessage($input: DeleteMessageInput!) { deleteMessage(input: $input) { ...MessageFields } }
        """ + MESSAGE_FIELDS),
    "GetMessage": gql("query GetMessage($id: ID!) { getMessage(id: $id) { ...MessageFields } }" + MESSAGE_FIELDS),
    "MessagesByRoom": gql("""
        query MessagesByRoom($roomId: ID!, $limit: Int, $nextToken: String) {
          listMessagesByRoom(roomId: $roomId, sortDirection: ASC, limit: $limit, nextToken: $nextToken) {
            items { ...MessageFields }
            nextToken
          }
        }
        """ + MESSAGE_FIELDS),
    "SyncMessages": gql("""
        query SyncMessages($since: String, $limit: Int, $nextToken: String) {
          syncMessages(since: $since, limit: $limit, nextToken: $nextToken) {
            items { ...MessageFields }
            nextToken
            lastSeq
          }
        }
        """ + MESSAGE_FIELDS),
    "CreateNotice": gql(
        "mutation CreateNotice($input: CreateNoticeInput!) { createNotice(input: $input) { id title } }"
    ),
    "ListNotices": gql("query ListNotices { listNotices(limit: 1000) { items { id title } nextToken } }"),
}

PAGE = 2  # small, so the five messages take three pages


def error_code(error):
    extensions = error.get("extensions") if isinstance(error, dict) else None
    return extensions.get("code") if isinstance(extensions, dict) else None


class Caller:
    """One caller of the API (a user's session, the app's API key, or nobody) with its own gql session."""

    def __init__(self, name, session, user_id=None):
        self.name = name
        self.session = session
        self.user_id = user_id

    def _execute(self, what, operation, variables):
        try:
            return self.session.execute(GraphQLRequest(DOCUMENTS[operation], variable_values=variables))
        except graphql.GraphQLError as refused:
            # gql validates each document against the introspected schema before sending it.
            raise CheckFailed(f"{what}: the live schema refuses {operation}: {refused.message}") from None

    def run(self, what, operation, **variables):
        """The value of the operation's one root field; a GraphQL error ends the run, naming the call."""
        try:
            data = self._execute(what, operation, variables)
        except TransportQueryError as error:
            raise CheckFailed(f"{what} ({self.name}): expected success\n    got errors: {show(error.errors)}") from None
        (value,) = data.values()
        return value

    def refused(self, what, code, operation, **variables):
        """The GraphQL error (a dict) with `extensions.code == code` that the operation must fail with."""
        try:
            data = self._execute(what, operation, variables)
        except TransportQueryError as error:
            errors = error.errors or []
            matching = [each for each in errors if error_code(each) == code]
            check(bool(matching), f"{what} ({self.name}) fails with extensions.code {code!r}", errors)
            return matching[0]
        raise CheckFailed(f"{what} ({self.name}): expected extensions.code {code!r}\n    got data: {show(data)}")

    def room_pages(self, room_id):
        """Every page of listMessagesByRoom (ASC, PAGE at a time), following nextToken until it is null."""
        pages = []
        token = None
        while True:
            what = f"listMessagesByRoom page {len(pages) + 1}"
            page = self.run(what, "MessagesByRoom", roomId=room_id, limit=PAGE, nextToken=token)
            if len(page["items"]) > PAGE:
                raise CheckFailed(f"{what} ({self.name}): more than {PAGE} items\n    got: {show(page)}")
            pages.append(page["items"])
            token = page["nextToken"]
            if token is None:
                return pages
            if len(pages) >= 100:
                raise CheckFailed(f"listMessagesByRoom ({self.name}): still a nextToken after 100 pages of {PAGE}")

    def sync(self, since):
        """Every change after `since` (None: from the start), PAGE at a time: the items and the last page's lastSeq."""
        items = []
        token = None
        pages = 0
        while True:
            pages += 1
            what = f"syncMessages(since: {since!r}) page {pages}"
            page = self.run(what, "SyncMessages", since=since, limit=PAGE, nextToken=token)
            if not isinstance(page["lastSeq"], str) or not page["lastSeq"]:
                raise CheckFailed(f"{what} ({self.name}): no lastSeq\n    got: {show(page)}")
            items += page["items"]
            token = page["nextToken"]
            if token is None:
                return items, page["lastSeq"]
            if pages >= 100:
                raise CheckFailed(f"syncMessages ({self.name}): still a nextToken after 100 pages of {PAGE}")


class Chat:
    """The callers, and what the steps have made so far."""

    def __init__(self, a, b, c, key, nobody):
        self.a, self.b, self.c, self.key, self.nobody = a, b, c, key, nobody
        self.room_id = None
        self.messages = []  # as created, in order

    @property
    def ids(self):
        return [message["id"] for message in self.messages]


def created_at(record):
    return datetime.fromisoformat(record["createdAt"].replace("Z", "+00:00"))


def documents_match(schema):
    step("gql builds the client schema from the live introspection (fetch_schema_from_transport=True)")
    check(schema is not None, "the introspection answer builds a schema")
    problems = {
        operation: [error.message for error in graphql.validate(schema, request.document)]
        for operation, request in DOCUMENTS.items()
    }
    problems = {operation: messages for operation, messages in problems.items() if messages}
    check(not problems, f"the {len(DOCUMENTS)} documents this script sends are valid against it", problems)
    print(f"   ({len(schema.type_map)} types; gql validates each document again as it sends it)")


def rooms(chat):
    step("A creates a room with a client-generated id; a retry is safe, other content under that id is not")
    a, b = chat.a, chat.b
    chat.room_id = str(uuid.uuid4())
    room_input = {"id": chat.room_id, "name": "Launch", "members": [a.user_id, b.user_id]}
    room = a.run("createRoom", "CreateRoom", input=room_input)
    check(room is not None and room["id"] == chat.room_id, f"createRoom keeps the client's id {chat.room_id}", room)
    check(room["_version"] == 1 and room["_deleted"] is False, "a new room has _version 1, _deleted false", room)
    check(sorted(room["members"] or []) == sorted([a.user_id, b.user_id]), "its members are A and B", room)
    again = a.run("createRoom again (a retry)", "CreateRoom", input=room_input)
    same = ("id", "createdAt", "updatedAt", "_version")
    check(
        again is not None and {k: again[k] for k in same} == {k: room[k] for k in same},
        f"the retried createRoom returns the same record ({', '.join(same)})",
        {"first": room, "retry": again},
    )
    other = {**room_input, "name": "Other"}
    a.refused("createRoom with the same id and another name", "conflict", "CreateRoom", input=other)


def messages(chat):
    step("A and B post messages in the room; the owner is filled from the session")
    for author, text in [
        (chat.a, "hello"),
        (chat.b, "hi A"),
        (chat.a, "agenda?"),
        (chat.b, "ship it"),
        (chat.a, "done"),
    ]:
        message = author.run(f"createMessage {text!r}", "CreateMessage", input={"roomId": chat.room_id, "text": text})
        check(
            message is not None and message["text"] == text and message["roomId"] == chat.room_id,
            f"{author.name} posts {text!r}",
            message,
        )
        check(
            message["owner"] == author.user_id and message["_version"] == 1 and message["_deleted"] is False,
            f"  owned by {author.name}, _version 1",
            message,
        )
        chat.messages.append(message)


def paging(chat):
    step(f"listMessagesByRoom(sortDirection: ASC, limit: {PAGE}) gives every message once, in createdAt order")
    pages = chat.a.room_pages(chat.room_id)
    listed = [item for page in pages for item in page]
    listed_ids = [item["id"] for item in listed]
    sizes = [len(page) for page in pages]
    print(f"   pages of {sizes}")
    check(len(pages) >= 3, f"{len(chat.ids)} messages take at least 3 pages of {PAGE}", sizes)
    check(len(listed_ids) == len(set(listed_ids)), "no message comes twice", listed_ids)
    check(set(listed_ids) == set(chat.ids), "every message comes", {"listed": listed_ids, "created": chat.ids})
    keys = [(created_at(item), item["id"]) for item in listed]
    check(keys == sorted(keys), "in createdAt (then id) order", [[item["createdAt"], item["id"]] for item in listed])
    return listed_ids


def visibility(chat, listed_ids):
    step("B reads A's messages through the room; C, not a member, reads none and cannot post")
    b_listed = [item["id"] for page in chat.b.room_pages(chat.room_id) for item in page]
    check(
        b_listed == listed_ids, "B lists the same messages, in the same order, as A", {"A": listed_ids, "B": b_listed}
    )
    seen = chat.b.run("getMessage of A's message", "GetMessage", id=chat.ids[0])
    check(seen is not None and seen["text"] == "hello", "B gets A's message by id", seen)
    hidden = chat.c.run("listMessagesByRoom", "MessagesByRoom", roomId=chat.room_id, limit=PAGE, nextToken=None)
    check(hidden["items"] == [] and hidden["nextToken"] is None, "C lists none of the room's messages", hidden)
    for author, message in zip("AB", chat.messages[:2]):
        got = chat.c.run("getMessage", "GetMessage", id=message["id"])
        check(got is None, f"C's getMessage of {author}'s message is null", got)
    chat.c.refused(
        "createMessage in a room C is not in", "forbidden", "CreateMessage", input={"roomId": chat.room_id, "text": "let me in"}
    )


def cursors(chat):
    step("a tampered nextToken is refused")
    first = chat.a.run("listMessagesByRoom", "MessagesByRoom", roomId=chat.room_id, limit=PAGE, nextToken=None)
    token = first["nextToken"]
    check(isinstance(token, str) and len(token) > 1, f"a first page of {PAGE} has a nextToken", first)
    chat.a.refused(
        "listMessagesByRoom with a tampered nextToken",
        "bad_cursor",
        "MessagesByRoom",
        roomId=chat.room_id,
        limit=PAGE,
        nextToken=tampered(token),
    )


def updates(chat):
    step("updates say the _version they expect; a stale one or a failed condition changes nothing")
    a, target = chat.a, chat.messages[0]
    edit = {"id": target["id"], "text": "hello, edited", "_version": 1}
    edited = a.run("updateMessage", "UpdateMessage", input=edit)
    check(
        edited is not None and edited["_version"] == 2 and edited["text"] == "hello, edited",
        "the update with _version 1 gives _version 2",
        edited,
    )
    check(edited["createdAt"] == target["createdAt"], "  and keeps createdAt", edited)
    stale = {"id": target["id"], "text": "stale", "_version": 1}
    conflict = a.refused("updateMessage with the stale _version 1", "conflict", "UpdateMessage", input=stale)
    current = conflict["extensions"].get("current")
    check(
        isinstance(current, dict)
        and current.get("id") == target["id"]
        and current.get("_version") == 2
        and current.get("text") == "hello, edited",
        "  extensions.current is the server's record (_version 2, the edited text)",
        conflict,
    )
    a.refused(
        "updateMessage whose condition does not hold",
        "condition_failed",
        "UpdateMessage",
        input={"id": target["id"], "text": "never", "_version": 2},
        condition={"text": {"eq": "not what it says"}},
    )
    kept = a.run("getMessage", "GetMessage", id=target["id"])
    check(
        kept is not None and kept["_version"] == 2 and kept["text"] == "hello, edited",
        "the refused writes left it at _version 2 with the edited text",
        kept,
    )


def sync(chat):
    step("a delete leaves a tombstone that sync returns after the lastSeq taken before it")
    a, b = chat.a, chat.b
    target, other = chat.messages[0], chat.messages[1]  # A's (at _version 2 after updates) and B's
    before, since = a.sync(None)
    synced = {item["id"] for item in before}
    check(
        set(chat.ids) <= synced,
        f"A's first sync (pages of {PAGE}) has every message of the room",
        {"synced": sorted(synced), "created": chat.ids},
    )
    print(f"   lastSeq {since!r}")
    deleted = a.run("deleteMessage", "DeleteMessage", input={"id": target["id"], "_version": 2})
    check(
        deleted is not None and deleted["id"] == target["id"] and deleted["_deleted"] is True,
        "deleteMessage returns the record with _deleted true",
        deleted,
    )
    edit = {"id": other["id"], "text": "hi A, edited", "_version": 1}
    changed = b.run("updateMessage", "UpdateMessage", input=edit)
    check(changed is not None and changed["_version"] == 2, "then B edits its own message", changed)
    after, last = a.sync(since)
    summary = [{k: item[k] for k in ("id", "_deleted", "_version")} for item in after]
    check(
        [item["id"] for item in after] == [target["id"], other["id"]],
        "sync since that lastSeq has the delete, then the edit, in change order",
        {"expected": [target["id"], other["id"]], "items": summary},
    )
    check(after[0]["_deleted"] is True, "  the deleted message comes as a tombstone (_deleted true)", after[0])
    check(
        after[1]["_deleted"] is False and after[1]["text"] == "hi A, edited", "  the edited one as it is now", after[1]
    )
    check(last != since, "  with a new lastSeq", {"before": since, "after": last})
    quiet, _ = a.sync(last)
    check(quiet == [], "a sync since the new lastSeq has nothing", quiet)
    gone = a.run("getMessage of the deleted message", "GetMessage", id=target["id"])
    check(gone is None, "getMessage of the deleted message is null", gone)
    remaining = [item["id"] for page in a.room_pages(chat.room_id) for item in page]
    check(
        target["id"] not in remaining and len(remaining) == len(chat.ids) - 1,
        "the room's list no longer has it",
        remaining,
    )
    c_synced, _ = chat.c.sync(None)
    check(not [item for item in c_synced if item["roomId"] == chat.room_id], "C's sync has none of them", c_synced)


def credentials(chat):
    step("the app's API key reads what a public rule allows; no credentials read nothing protected")
    title = f"Welcome {uuid.uuid4()}"
    notice = chat.a.run("createNotice", "CreateNotice", input={"title": title})
    check(notice is not None and notice["title"] == title, "A (signed in) posts a notice", notice)
    read = chat.key.run("listNotices", "ListNotices")
    check(title in [item["title"] for item in read["items"]], "the API key alone lists it", read)
    chat.nobody.refused("listNotices", "unauthorized", "ListNotices")
    chat.nobody.refused(
        "listMessagesByRoom", "unauthorized", "MessagesByRoom", roomId=chat.room_id, limit=PAGE, nextToken=None
    )


def transport(url, token=None, api_key=None):
    headers = {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if api_key:
        headers["X-Api-Key"] = api_key
    # No transport retries: the one retry this script makes (a create) is its own, and is checked.
    return RequestsHTTPTransport(url=url, headers=headers, timeout=30, retries=0)


def exercise(config):
    url, users = config["url"], config["users"]
    with ExitStack() as stack:
        # Connecting the first client runs the introspection query; the others reuse the schema it built.
        first = Client(transport=transport(url, token=users["a"]["token"]), fetch_schema_from_transport=True)
        a = Caller("A", stack.enter_context(first), users["a"]["id"])
        documents_match(first.schema)

        def caller(name, token=None, api_key=None, user_id=None):
            client = Client(transport=transport(url, token=token, api_key=api_key), schema=first.schema)
            return Caller(name, stack.enter_context(client), user_id)

        chat = Chat(
            a,
            caller("B", token=users["b"]["token"], user_id=users["b"]["id"]),
            caller("C", token=users["c"]["token"], user_id=users["c"]["id"]),
            caller("API key", api_key=config["apiKey"]),
            caller("no credentials"),
        )
        rooms(chat)
        messages(chat)
        visibility(chat, paging(chat))
        cursors(chat)
        updates(chat)
        sync(chat)
        credentials(chat)


def load(argument):
    def validate(config):
        if not (isinstance(config["url"], str) and isinstance(config["apiKey"], str)):
            raise TypeError("url and apiKey must be strings")

    return load_config(argument, ("a", "b", "c"), validate, __doc__)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    config = load(sys.argv[1])
    try:
        exercise(config)
    except CheckFailed as failure:
        print(f"\nFAILED: {failure}")
        return 1
    except TransportError as error:
        # No answer, an answer that is not GraphQL, or a failed introspection.
        print(f"\nFAILED: {type(error).__name__}: {error}")
        return 1
    print("\nok: every check held")
    return 0


if __name__ == "__main__":
    sys.exit(main())
