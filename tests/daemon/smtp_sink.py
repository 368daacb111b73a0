"""A real SMTP server for test_notify.py: Debian's aiosmtpd (python3-aiosmtpd), run by
/usr/bin/python3 (the interpreter the package installs for), which may not be the one running the
tests. Usage: smtp_sink.py PORT DIR. Each message is saved as DIR/NNNN.eml with its envelope
recipients in DIR/NNNN.rcpt (written first; the .eml appears last, whole). Prints "ready"."""
import os
import sys
import threading

from aiosmtpd.controller import Controller


class Sink:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            base = os.path.join(self.directory, "%04d" % self.count)
        with open(base + ".rcpt", "w") as f:
            f.write("\n".join(envelope.rcpt_tos))
        with open(base + ".tmp", "wb") as f:
            f.write(envelope.original_content or envelope.content)
        os.rename(base + ".tmp", base + ".eml")
        return "250 OK: queued"


def main():
    port, directory = int(sys.argv[1]), sys.argv[2]
    controller = Controller(Sink(directory), hostname="127.0.0.1", port=port)
    controller.start()
    print("ready", flush=True)
    threading.Event().wait()  # until SIGTERM


if __name__ == "__main__":
    main()
