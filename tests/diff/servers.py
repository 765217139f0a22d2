"""Starting and stopping the two servers under comparison: Debian's nginx
(foreground, its prefix, pid, logs and temp folders in the scenario's
folder) and portico, each on its own loopback port; both stopped by pid."""
import os
import signal
import socket
import subprocess
import time

START_TIMEOUT = 10
STOP_TIMEOUT = 5


def free_port():
    """An ephemeral loopback port, free a moment ago (both servers need
    their port in the config file, so port 0 is not an option)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def nginx_conf(folder, http_block):
    # A master started as root switches its workers to `nobody` when `user`
    # is not set, and nobody cannot read the test's 0700 folders: as root
    # (CI's containers) the workers stay root.
    user = "user root root;\n" if os.geteuid() == 0 else ""
    temp = "\n".join(f"    {kind}_temp_path {folder}/temp/{kind};"
                     for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return (f"{user}worker_processes 1;\n"
            f"error_log {folder}/nginx-error.log warn;\n"
            f"pid {folder}/nginx.pid;\n"
            "events { worker_connections 256; }\n"
            "http {\n"
            "    include /etc/nginx/mime.types;\n"
            "    default_type application/octet-stream;\n"
            "    access_log off;\n"
            f"{temp}\n"
            f"{http_block}\n"
            "}\n")


def portico_conf(folder, port, rest):
    """[server] last: keys the scenario's part starts with, before its first
    table, are [server] keys too (trusted_proxies)."""
    return (f'[log]\nlevel = "warn"\nerror = "{folder}/portico-error.log"\n\n'
            f'[server]\nlisten = ["127.0.0.1:{port}"]\nworkers = 1\n'
            f"{rest}")


class Server:
    """One server process: started in its own session, so that a master
    that does not stop on SIGTERM is killed with the workers it started."""

    def __init__(self, name, command, port, log):
        self.name, self.port, self.log = name, port, log
        self.stderr = log.with_name(f"{name}-stderr.log")
        with open(self.stderr, "wb") as stderr:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=stderr,
                                            start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{name} exited at start:\n{self.errors()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{name} did not listen on {port} in {START_TIMEOUT} s:\n{self.errors()}")

    def errors(self):
        logs = [path.read_text() for path in (self.stderr, self.log) if path.exists()]
        return "".join(logs).strip() or "(nothing logged)"

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)  # the session started above
                self.process.wait(timeout=STOP_TIMEOUT)


def start_nginx(nginx, folder, port, http_block, whole_file=False):
    """whole_file: `http_block` is a whole nginx.conf (a convert case)."""
    (folder / "temp").mkdir(exist_ok=True)
    conf = folder / "nginx.conf"
    conf.write_text(http_block if whole_file else nginx_conf(folder, http_block))
    log = folder / "nginx-error.log"
    return Server("nginx", [nginx, "-p", str(folder), "-e", str(log), "-c", str(conf),
                            "-g", "daemon off;"], port, log)


def start_portico(portico, folder, port, rest, whole_file=False):
    """whole_file: `rest` is a whole portico config (a converted one)."""
    conf = folder / "portico.toml"
    conf.write_text(rest if whole_file else portico_conf(folder, port, rest))
    check = subprocess.run([portico, "-t", "-c", str(conf)], capture_output=True, text=True,
                           timeout=START_TIMEOUT)
    if check.returncode != 0:
        raise RuntimeError(f"portico -t refuses the twin config:\n{check.stdout}{check.stderr}")
    return Server("portico", [portico, "-c", str(conf)], port, folder / "portico-error.log")
