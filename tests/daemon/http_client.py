"""A small HTTP client for the HTTP front end's tests (test_http.py, test_prometheus.py): raw
http.client, so that tests control every header (Host, Origin, cookies) and see every status
(redirects are not followed)."""
import gzip
import http.client
import json
import socket


def lan_address():
    """This machine's address on its main network interface (no packet is sent), or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("10.254.254.254", 9))
        address = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # list of (name, value)
        self.body = body

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def all_headers(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def text(self):
        data = self.body
        if self.header("Content-Encoding") == "gzip":
            data = gzip.decompress(data)
        return data.decode("utf-8")

    def json(self):
        return json.loads(self.text())


class Http:
    """Requests to 127.0.0.1:port; `cookies` are kept from Set-Cookie like a browser would."""

    def __init__(self, port, address="127.0.0.1"):
        self.port = port
        self.address = address
        self.cookies = {}

    def request(self, method, path, body=None, headers=None, host=None, cookies=True):
        conn = http.client.HTTPConnection(self.address, self.port, timeout=30)
        h = {"Host": host if host is not None else f"{self.address}:{self.port}"}
        if cookies and self.cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for k, v in h.items():
            conn.putheader(k, v)
        data = body.encode() if isinstance(body, str) else body
        if data is not None:
            conn.putheader("Content-Length", str(len(data)))
        conn.endheaders()
        if data:
            conn.send(data)
        r = conn.getresponse()
        res = Response(r.status, r.getheaders(), r.read())
        conn.close()
        for v in res.all_headers("Set-Cookie"):
            name, _, rest = v.partition("=")
            value = rest.split(";")[0]
            if "Max-Age=0" in v:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = value
        return res

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body=body if body is not None else {}, **kw)

    def csrf_headers(self):
        return {"X-Rota-CSRF": self.cookies.get("rota_csrf", "")}

    def sign_in(self, url):
        """Follows a `rota web` link as a browser does: opens it (a page that asks to confirm whom it
        signs in as), then presses its button (a same-origin POST of the token). Returns the POST's
        response, or the GET's when it is not the confirmation page."""
        path = url[url.index("/auth/"):]
        page = self.get(path)
        if page.status != 200:
            return page
        token = path.split("token=", 1)[1]
        return self.post("/auth/login", "token=" + token,
                         headers={"Content-Type": "application/x-www-form-urlencoded",
                                  "Origin": f"http://{self.address}:{self.port}"})


def http_job(command, cwd, gpus=1, time_limit=600, env=None):
    """A submit request's "job" (docs/api.md)."""
    return {"command": command, "cwd": cwd, "env": dict({"PATH": "/usr/bin:/bin"}, **(env or {})),
            "request": {"kind": "gpus", "gpus": gpus}, "time_limit": time_limit}
