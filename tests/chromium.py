"""Debian's headless Chromium, driven over the DevTools protocol on a pipe.

``--remote-debugging-pipe`` makes Chromium read protocol messages from file
descriptor 3 and write its answers and events to 4, each a JSON object ended
by a NUL byte: no port, no WebSocket, no driver package whose version must
match the browser's. Every request any frame of the page makes (subframes in
other processes included, through auto-attach) is recorded, so a test can
check that a page stays offline.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

# Nothing in the background reaches out: no updates, sync, field trials or QUIC.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
)


def executable() -> str | None:
    return shutil.which("chromium")


class BrowserError(RuntimeError):
    pass


class Chromium:
    """One headless browser with one page of ``width`` x ``height`` CSS pixels."""

    def __init__(self, width: int = 1400, height: int = 900, timeout: float = 30):
        exe = executable()
        if exe is None:
            raise BrowserError("chromium is not installed (make setup installs it)")
        self.timeout = timeout
        self.requests: list[str] = []
        self._profile = tempfile.mkdtemp(prefix="netnoise-chromium-")
        self._next_id = 0
        self._buffer = b""
        self._events: list[dict[str, Any]] = []
        self._replies: dict[int, dict[str, Any]] = {}
        to_browser, self._send_fd = os.pipe()
        self._recv_fd, from_browser = os.pipe()

        def onto_3_and_4():
            os.dup2(to_browser, 3)
            os.dup2(from_browser, 4)

        self.process = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={self._profile}", "--remote-debugging-pipe"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=onto_3_and_4,
            pass_fds=(3, 4),
        )
        os.close(to_browser)
        os.close(from_browser)
        try:
            target = self.call("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
                "sessionId"
            ]
            self._watch(self.session)
            self.call(
                "Emulation.setDeviceMetricsOverride",
                width=width,
                height=height,
                deviceScaleFactor=1,
                mobile=False,
                session=self.session,
            )
        except BaseException:
            self.close()
            raise

    def _watch(self, session: str) -> None:
        """Record the requests of ``session`` and attach to every frame it opens."""
        self.call("Network.enable", session=session)
        self.call("Page.enable", session=session)
        self.call(
            "Target.setAutoAttach",
            autoAttach=True,
            waitForDebuggerOnStart=False,
            flatten=True,
            session=session,
        )

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._send_fd, json.dumps(message).encode() + b"\0")
        while ident not in self._replies:
            self._take(self._receive())
        reply = self._replies.pop(ident)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def _take(self, message: dict[str, Any]) -> None:
        """File a reply under its id; record an event (and watch a new frame's target)."""
        if "id" in message:
            self._replies[message["id"]] = message
            return
        self._events.append(message)
        if message.get("method") == "Network.requestWillBeSent":
            self.requests.append(message["params"]["request"]["url"])
        elif message.get("method") == "Target.attachedToTarget":
            self._watch(message["params"]["sessionId"])

    def _receive(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._recv_fd], [], [], left)[0]:
                raise BrowserError(f"no answer from chromium within {self.timeout} s")
            chunk = os.read(self._recv_fd, 1 << 16)
            if not chunk:
                raise BrowserError(f"chromium exited (status {self.process.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_for(self, method: str) -> dict[str, Any]:
        """The next event ``method`` (one already received counts)."""
        while True:
            for i, event in enumerate(self._events):
                if event.get("method") == method:
                    del self._events[: i + 1]
                    return event
            self._events.clear()
            self._take(self._receive())

    def open(self, url: str) -> None:
        self._events.clear()
        self.call("Page.navigate", url=url, session=self.session)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call(
            "Runtime.evaluate",
            expression=expression,
            returnByValue=True,
            awaitPromise=True,
            session=self.session,
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:80]}...: {result['exceptionDetails']}")
        return result["result"].get("value")

    def until(self, expression: str, timeout: float | None = None) -> Any:
        """Poll a JavaScript expression until it is truthy; return its value."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"still false after {timeout or self.timeout} s: {expression}")
            time.sleep(0.1)

    def frame_texts(self) -> list[str]:
        """The text of every frame inside the page (iframes of any origin)."""
        tree = self.call("Page.getFrameTree", session=self.session)["frameTree"]
        texts = []
        for child in tree.get("childFrames", []):
            try:
                world = self.call(
                    "Page.createIsolatedWorld", frameId=child["frame"]["id"], session=self.session
                )
                found = self.call(
                    "Runtime.evaluate",
                    expression="document.body ? document.body.innerText : ''",
                    contextId=world["executionContextId"],
                    returnByValue=True,
                    session=self.session,
                )
            except BrowserError:  # the frame is between two documents
                continue
            texts.append(found["result"].get("value", ""))
        return texts

    def until_frame_shows(self, text: str, timeout: float | None = None) -> str:
        """Wait until a frame inside the page shows ``text``; return that frame's text."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            shown = [t for t in self.frame_texts() if text in t]
            if shown:
                return shown[0]
            if time.monotonic() > deadline:
                raise BrowserError(f"no frame shows {text!r} after {timeout or self.timeout} s")
            time.sleep(0.1)

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png", session=self.session)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            if self.process.poll() is None:
                with contextlib.suppress(BrowserError, OSError):
                    self.call("Browser.close")
                try:
                    self.process.wait(10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        finally:
            for fd in (self._send_fd, self._recv_fd):
                with contextlib.suppress(OSError):
                    os.close(fd)
            shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
