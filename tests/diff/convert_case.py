"""A differential case of `portico convert` (tests/convert/NAME.conf): the
nginx config as nginx runs it, and as portico runs what `portico convert`
made of it. The .conf is a whole nginx.conf whose @TOKENS@ the harness
fills for each server (its own folder and port, the shared www and app);
tests/convert/cases.py says which app instances, files (the shared www's,
each server folder's), requests and refusals a case has. The scenario interface is diff_test.py's (UPSTREAMS,
make_www, REQUESTS, RESPONSE_HEADERS, ECHO_HEADERS, nginx(), portico())."""
import os
import re
import subprocess
import sys
from pathlib import Path

CONVERT_DIR = Path(__file__).resolve().parents[1] / "convert"
sys.path.insert(0, str(CONVERT_DIR))
import cases  # noqa: E402
from scenario import Request  # noqa: E402


def certificate(folder):
    """A self-signed certificate for the TLS listeners (nginx needs one to
    start; the requests go to the cleartext port)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    if not cert.exists():
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:prime256v1", "-nodes", "-days", "30", "-subj",
                        "/CN=example.com", "-addext", "subjectAltName=DNS:example.com",
                        "-keyout", str(key), "-out", str(cert)],
                       check=True, capture_output=True)
    return cert, key


def render(template, context, tls_port):
    """The .conf with this server's values in place of its @TOKENS@."""
    values = {"FOLDER": str(context.folder), "PORT": str(context.port), "WWW": str(context.www),
              "DEAD": str(context.dead_port), "TLSPORT": str(tls_port),
              "USER": "user root root;" if os.geteuid() == 0 else ""}
    if "@CERT@" in template:
        cert, key = certificate(context.folder)
        values.update(CERT=str(cert), KEY=str(key))
    for name, address in context.upstreams.items():
        values[f"APP_{name}"] = address
        values[f"SOCKET_{name}"] = address.removeprefix("unix:")
    rendered = re.sub(r"@([A-Za-z0-9_]+)@", lambda match: values[match.group(1)], template)
    # The temp folders nginx writes request bodies to, under the server's
    # folder (an include, so the converter reads one too).
    temp = context.folder / "temp"
    temp.mkdir(exist_ok=True)
    (context.folder / "conf.d").mkdir(exist_ok=True)
    (context.folder / "conf.d" / "temp.conf").write_text("".join(
        f"{kind}_temp_path {temp}/{kind};\n"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")))
    return rendered


class ConvertScenario:
    """One case as diff_test.py runs a scenario. `nginx` and `portico`
    return whole files: FULL_FILES tells diff_test.py not to wrap them."""
    FULL_FILES = True
    OWN_ERROR_PAGES = True  # each server's own error page reads the same

    def __init__(self, name, portico_binary):
        self.name = name
        self.case = cases.CASES[name]
        self.template = (CONVERT_DIR / f"{name}.conf").read_text()
        self.portico_binary = portico_binary
        self.UPSTREAMS = self.case.upstreams
        self.REQUESTS = [self.known(request) for request in self.case.requests]
        self.RESPONSE_HEADERS = cases.RESPONSE_HEADERS
        self.ECHO_HEADERS = cases.ECHO_HEADERS
        self.INSTANCE_VARIES = self.case.instance_varies
        self.tls_port = None

    def known(self, request):
        """The request, marked with the case's known difference for it."""
        why = self.case.known.get((request.method, request.target, request.host))
        return Request(**{**request.__dict__, "known_difference": why}) if why else request

    def make_www(self, www):
        cases.make_www(www)

    def write_files(self, context):
        for relative, text in self.case.files.items():
            (context.folder / relative).write_text(text)

    def nginx(self, context):
        self.write_files(context)
        return render(self.template, context, self.tls_port_for())

    def portico(self, context):
        """The converted config; the converter's refusals must be the
        case's, no more, no fewer."""
        self.write_files(context)
        source = context.folder / "nginx.conf"
        source.write_text(render(self.template, context, self.tls_port_for()))
        done = subprocess.run([self.portico_binary, "convert", str(source)],
                              capture_output=True, text=True, timeout=10)
        (context.folder / "convert-stderr.txt").write_text(done.stderr)
        refused = [line for line in done.stderr.splitlines() if line.strip()]
        expected = self.case.refusals
        wanted_code = 2 if expected else 0
        unexplained = [line for line in refused
                       if not any(f": {directive}" in line for directive in expected)]
        missing = [directive for directive in expected
                   if not any(f": {directive}" in line for line in refused)]
        if done.returncode != wanted_code or unexplained or missing:
            raise RuntimeError(f"portico convert exited {done.returncode} (wanted {wanted_code});"
                               f" unexpected refusals {unexplained}, missing {missing}:\n"
                               f"{done.stderr}")
        for line in refused:
            print(f"refused (as the case expects): {line}")
        return done.stdout

    def tls_port_for(self):
        # One TLS port per case run, the same in both renders: only a
        # listener that must exist, never asked.
        if self.tls_port is None:
            from servers import free_port
            self.tls_port = free_port()
        return self.tls_port
