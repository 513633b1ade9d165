"""A provider on loopback that takes every call and never answers it: a vessel (or a brain door)
that hangs, for the tests that kill or stop what waits on it."""

import socket
import threading


class SilentProvider(threading.Thread):
    """Accepts connections on ``port`` and holds them open; ``called`` is set at the first."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.called = threading.Event()
        self.held: list[socket.socket] = []

    def run(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.held.append(client)
            self.called.set()

    def close(self) -> None:
        self.listener.close()
        for client in self.held:
            client.close()
