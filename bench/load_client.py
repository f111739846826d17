"""A light client of one Streamlit page session, speaking Streamlit's own websocket protocol (for bench/load.py).

It does what the browser's frontend does on the wire, nothing more: it connects to ``/_stcore/stream`` with the
``streamlit`` subprotocol (Streamlit 1.67's Starlette handler, ``streamlit/web/server/starlette/
starlette_websocket.py``: the first Sec-WebSocket-Protocol entry is the protocol, the second an XSRF token, the
third a session to resume), sends ``BackMsg.rerun_script`` with a ``ClientState`` (the address's query string,
the widget states the user set, the page's script hash), and reads the ``ForwardMsg`` stream: ``new_session``
(the session id and script hash), ``delta`` (elements and blocks: widget ids, kinds, labels and options are read
from them, and ``exception`` elements are the page's errors), ``page_info_changed`` (the address the page wrote),
``script_finished`` (the end of a run) and ``backend_operation_response`` (a deferred download's URL). Like
the frontend's ForwardMsgCache it keeps the messages the server marks ``cacheable`` (large elements) and names
them in ``cached_message_hashes``, so the server sends a ``ref_hash`` instead of an unchanged large element.

A rerun's latency is the wall time from the BackMsg sent to the ``script_finished`` of the run it started (runs
that end early for a rerun are waited through), as the browser sees it less its own drawing.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

WIDGET_KINDS = (
    "multiselect",
    "selectbox",
    "text_input",
    "radio",
    "button",
    "download_button",
    "dataframe",
    "component_instance",
    "file_uploader",
)
RUN_DONE = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}


class SessionError(RuntimeError):
    """The session cannot go on: the server closed the socket, or a run did not finish in time."""


@dataclass(frozen=True)
class Widget:
    """One widget of the latest run: its id (what a WidgetState names), its element kind (``multiselect``,
    ``tab_container``, ...), label and options (formatted, as the frontend sends them back)."""

    id: str
    kind: str
    label: str
    options: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass
class RunResult:
    """One script run as the client saw it: seconds from the message sent to ``script_finished``, the page's
    exception messages, and the bytes of ForwardMsgs received."""

    latency_s: float
    exceptions: list[str]
    received_bytes: int


def _widget_of(element: Any) -> Widget | None:
    """The Widget an ``Element`` proto is, or None for a non-widget element."""
    kind = element.WhichOneof("type")
    if kind not in WIDGET_KINDS:
        return None
    proto = getattr(element, kind)
    if not getattr(proto, "id", ""):
        return None  # a dataframe without selection, a button with no state
    if kind == "component_instance":
        return Widget(proto.id, kind, proto.component_name)
    if kind == "download_button":
        return Widget(proto.id, kind, proto.label, extra={"deferred_file_id": proto.deferred_file_id, "url": proto.url})
    return Widget(proto.id, kind, getattr(proto, "label", ""), tuple(getattr(proto, "options", ()) or ()))


class PageClient:
    """One user's session of the page at ``base_url`` (``http://127.0.0.1:PORT``).

    Use: ``await client.open(query)``, then ``await client.set(widget, value)`` per interaction, ``await
    client.download(widget)`` for a deferred download, ``await client.close()``. Raises SessionError when the
    server closes the socket or a run takes longer than ``timeout_s``."""

    def __init__(self, base_url: str, timeout_s: float = 120.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.session_id = ""
        self.script_hash = ""
        self.query_string = ""
        self.widgets: dict[str, Widget] = {}
        self.states: dict[str, WidgetState] = {}
        self._connection: WebSocketClientConnection | None = None
        self._reader: asyncio.Task | None = None
        self._run_widgets: dict[str, Widget] = {}
        self._exceptions: list[str] = []
        self._bytes = 0
        self._finished: asyncio.Future | None = None
        self._responses: dict[str, asyncio.Future] = {}
        self._closed_by_client = False
        self._cache: dict[str, ForwardMsg] = {}  # cacheable messages by hash, as the frontend's ForwardMsgCache

    async def open(self, query_string: str = "") -> RunResult:
        """Connect and run the page once (what opening its address does). Returns that first run."""
        ws_url = self.base_url.replace("http", "ws", 1) + "/_stcore/stream"
        request = HTTPRequest(ws_url, headers={"Sec-WebSocket-Protocol": "streamlit"})
        start = time.perf_counter()
        self._connection = await asyncio.wait_for(
            websocket_connect(request, subprotocols=["streamlit"], max_message_size=1 << 30), self.timeout_s
        )
        self._reader = asyncio.ensure_future(self._read())
        self.query_string = query_string
        return await self._rerun(start)

    async def close(self) -> None:
        """Close the socket (the tab closed)."""
        self._closed_by_client = True
        if self._connection is not None:
            self._connection.close()
        if self._reader is not None:
            try:
                await asyncio.wait_for(self._reader, 5)
            except (TimeoutError, asyncio.CancelledError, SessionError):
                pass  # wait_for cancelled a reader that did not end; one the server ended raised SessionError

    def find(self, kind: str, label: str | None = None) -> Widget | None:
        """The latest run's first widget of ``kind`` whose label starts with ``label`` (any label when None)."""
        for widget in self.widgets.values():
            if widget.kind == kind and (label is None or widget.label.startswith(label)):
                return widget
        return None

    async def set(self, widget: Widget, **value: Any) -> RunResult:
        """Set one widget (``string_value="..."``, ``string_array_value=[...]``, ``json_value="..."``,
        ``trigger_value=True``) and wait for the rerun it causes, as a user's change does."""
        state = WidgetState(id=widget.id)
        for name, item in value.items():
            if name == "string_array_value":
                state.string_array_value.data.extend(item)
            else:
                setattr(state, name, item)
        self.states[widget.id] = state
        result = await self._rerun(time.perf_counter())
        if "trigger_value" in value:  # a trigger fires once, as the frontend resets it
            self.states.pop(widget.id, None)
        return result

    async def download(self, widget: Widget) -> tuple[float, int]:
        """Click a download button: a deferred file is asked for over the socket, then fetched over HTTP.
        Returns (seconds, bytes). Raises SessionError on a refused or failed download."""
        start = time.perf_counter()
        url = widget.extra.get("url") or ""
        file_id = widget.extra.get("deferred_file_id") or ""
        if file_id:
            request_id = uuid.uuid4().hex
            future: asyncio.Future = asyncio.get_running_loop().create_future()
            self._responses[request_id] = future
            message = BackMsg()
            message.backend_operation_request.request_id = request_id
            message.backend_operation_request.session_id = self.session_id
            message.backend_operation_request.deferred_file.file_id = file_id
            await self._send(message)
            response = await asyncio.wait_for(future, self.timeout_s)
            if response.error_msg:
                raise SessionError(f"download refused: {response.error_msg}")
            url = response.deferred_file.url
        if not url:
            raise SessionError(f"download button {widget.label!r} has no file")
        full = url if url.startswith("http") else self.base_url + "/" + url.lstrip("/")
        http = AsyncHTTPClient(force_instance=True)
        try:
            reply = await http.fetch(full, request_timeout=self.timeout_s, raise_error=False)
        finally:
            http.close()
        if reply.code != 200:
            raise SessionError(f"download of {widget.label!r} answered HTTP {reply.code}")
        return time.perf_counter() - start, len(reply.body or b"")

    async def _send(self, message: BackMsg) -> None:
        if self._connection is None or (self._reader is not None and self._reader.done()):
            raise SessionError("the server closed the session's socket")
        await self._connection.write_message(message.SerializeToString(), binary=True)

    async def _rerun(self, start: float) -> RunResult:
        self._run_widgets, self._exceptions, self._bytes = {}, [], 0
        self._finished = asyncio.get_running_loop().create_future()
        message = BackMsg()
        state = message.rerun_script
        state.query_string = self.query_string
        state.page_script_hash = self.script_hash
        state.widget_states.widgets.extend(self.states.values())
        state.cached_message_hashes.extend(self._cache)
        await self._send(message)
        try:
            await asyncio.wait_for(asyncio.shield(self._finished), self.timeout_s)
        except TimeoutError as error:
            raise SessionError(f"a run did not finish within {self.timeout_s:.0f} s") from error
        latency = time.perf_counter() - start
        self.widgets = self._run_widgets
        return RunResult(latency, list(self._exceptions), self._bytes)

    async def _read(self) -> None:
        """Read ForwardMsgs until the socket closes; a close the client did not ask for fails the waiting run."""
        assert self._connection is not None
        while True:
            data = await self._connection.read_message()
            if data is None:
                break
            if isinstance(data, str):
                continue
            self._bytes += len(data)
            message = ForwardMsg()
            message.ParseFromString(data)
            self._handle(message)
        if not self._closed_by_client:
            error = SessionError("the server closed the session's socket")
            for future in [self._finished, *self._responses.values()]:
                if future is not None and not future.done():
                    future.set_exception(error)
            raise error

    def _handle(self, message: ForwardMsg) -> None:
        kind = message.WhichOneof("type")
        if kind == "ref_hash":  # a message this client said it has: read it from the client's own cache
            cached = self._cache.get(message.ref_hash)
            if cached is None:
                self._exceptions.append(f"protocol: a reference to a message never received ({message.ref_hash})")
                return
            message, kind = cached, cached.WhichOneof("type")
        elif message.metadata.cacheable and message.hash:
            self._cache[message.hash] = message
        if kind == "new_session":
            self.session_id = message.new_session.initialize.session_id
            self.script_hash = message.new_session.page_script_hash or message.new_session.main_script_hash
        elif kind == "delta":
            self._handle_delta(message.delta)
        elif kind == "page_info_changed":
            self.query_string = message.page_info_changed.query_string
        elif kind == "script_finished" and message.script_finished in RUN_DONE:
            if self._finished is not None and not self._finished.done():
                self._finished.set_result(True)
        elif kind == "backend_operation_response":
            future = self._responses.pop(message.backend_operation_response.request_id, None)
            if future is not None and not future.done():
                future.set_result(message.backend_operation_response)

    def _handle_delta(self, delta: Any) -> None:
        which = delta.WhichOneof("type")
        if which == "new_element":
            element = delta.new_element
            if element.WhichOneof("type") == "exception":
                self._exceptions.append(f"{element.exception.type}: {element.exception.message}")
            widget = _widget_of(element)
            if widget is not None:
                self._run_widgets[widget.id] = widget
        elif which == "add_block" and delta.add_block.WhichOneof("type") == "tab_container":
            container = delta.add_block.tab_container
            if container.id:
                self._run_widgets[container.id] = Widget(container.id, "tab_container", "tabs")


def json_state(value: Any) -> str:
    """A component's or a dataframe selection's value as the JSON string its WidgetState carries."""
    return json.dumps(value)
