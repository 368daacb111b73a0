"""A real SMTP server for test_notify.py: Debian's aiosmtpd (python3-aiosmtpd), run by
/usr/bin/python3 (the interpreter the package installs for), which may not be the one running the
tests. Usage: smtp_sink.py PORT DIR [CERT KEY]. Each message is saved as DIR/NNNN.eml with its
envelope recipients in DIR/NNNN.rcpt (written first; the .eml appears last, whole). With CERT and
KEY the server offers STARTTLS and refuses mail before it. Prints "ready"."""
import os
import ssl
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
    tls = {}
    if len(sys.argv) > 4:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(sys.argv[3], sys.argv[4])
        tls = {"tls_context": context, "require_starttls": True}
    controller = Controller(Sink(directory), hostname="127.0.0.1", port=port, **tls)
    controller.start()
    print("ready", flush=True)
    threading.Event().wait()  # until SIGTERM


if __name__ == "__main__":
    main()
