#!/usr/bin/env python3
"""Checks deploy/docker and deploy/k8s without Docker or a cluster (CI has
neither): the YAML parses, the fields a cluster or Compose would refuse or
silently misuse are there and agree with each other and with the configs,
and every portico.toml in them passes `portico -t`.

Usage: check_deploy_files.py PORTICO_BINARY SOURCE_DIR
"""

import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import yaml

problems = []


def check(condition, message):
    if not condition:
        problems.append(message)
    return condition


def seconds(duration):
    """ "25s" -> 25.0, as portico reads durations."""
    match = re.fullmatch(r"(\d+)(ms|s|m|h)", duration)
    if not match:
        raise ValueError(f"not a duration: {duration!r}")
    scale = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[match.group(2)]
    return int(match.group(1)) * scale


def port_of(address):
    return int(address.rsplit(":", 1)[1])


# ---- the Dockerfile ----------------------------------------------------------


class Dockerfile:
    """The stages of a Dockerfile: name -> (base image, [(instruction, arguments)])."""

    def __init__(self, path):
        text = re.sub(r"\\\n", " ", path.read_text())
        self.stages = {}
        self.order = []
        current = None
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            instruction, _, arguments = line.partition(" ")
            instruction = instruction.upper()
            if instruction == "FROM":
                match = re.fullmatch(r"(\S+)\s+AS\s+(\S+)", arguments.strip(), re.IGNORECASE)
                base, name = match.groups() if match else (arguments.strip(), str(len(self.order)))
                current = name
                self.stages[name] = (base, [])
                self.order.append(name)
            elif current is not None:
                self.stages[current][1].append((instruction, arguments.strip()))

    def instructions(self, stage, instruction):
        return [args for kind, args in self.stages[stage][1] if kind == instruction]

    def image_paths(self, stage, source_dir):
        """Where the stage's COPY lines put repository files: image path -> repository path."""
        paths = {}
        for arguments in self.instructions(stage, "COPY"):
            if arguments.startswith("--from"):
                continue
            *sources, destination = arguments.split()
            for source in sources:
                into_folder = len(sources) > 1 or destination.endswith("/")
                paths[destination + Path(source).name if into_folder else destination] = (
                    source_dir / source
                )
        return paths


def check_dockerfile(dockerfile, source_dir, docker_config):
    name = "deploy/docker/Dockerfile"
    first = dockerfile.order[0]
    final = dockerfile.order[-1]
    check(
        dockerfile.stages[first][0] == "debian:bookworm",
        f"{name}: the build stage is not debian:bookworm",
    )
    check(
        any("deploy/install-deps.sh" in run for run in dockerfile.instructions(first, "RUN")),
        f"{name}: the build stage does not install with deploy/install-deps.sh",
    )
    check(final == "portico", f"{name}: the last (default) stage is {final}, not portico")
    check(
        dockerfile.stages[final][0] == "debian:bookworm-slim",
        f"{name}: the runtime stage is not debian:bookworm-slim",
    )
    check("demo-app" in dockerfile.stages, f"{name}: no demo-app stage")
    for stage in dockerfile.order[1:]:
        for run in dockerfile.instructions(stage, "RUN"):
            check(
                not re.search(r"\b[\w.+-]+-dev\b", run),
                f"{name}: stage {stage} installs a -dev package: {run}",
            )
        users = dockerfile.instructions(stage, "USER")
        check(
            users and users[-1].split(":")[0] not in ("root", "0"),
            f"{name}: stage {stage} runs as root",
        )
    check(
        dockerfile.instructions(final, "STOPSIGNAL") == ["SIGTERM"],
        f"{name}: STOPSIGNAL is not SIGTERM",
    )
    healthcheck = " ".join(dockerfile.instructions(final, "HEALTHCHECK"))
    metrics_port = port_of(docker_config["metrics"]["listen"])
    check(
        "/healthz" in healthcheck and f"/{metrics_port}" in healthcheck,
        f"{name}: HEALTHCHECK does not ask /healthz on the metrics port {metrics_port}",
    )
    paths = dockerfile.image_paths(final, source_dir)
    check(
        paths.get("/etc/portico/portico.toml") == source_dir / "deploy/docker/portico.toml",
        f"{name}: deploy/docker/portico.toml is not copied to /etc/portico/portico.toml",
    )
    command = " ".join(
        dockerfile.instructions(final, "ENTRYPOINT") + dockerfile.instructions(final, "CMD")
    )
    check(
        "/etc/portico/portico.toml" in command,
        f"{name}: the command does not use /etc/portico/portico.toml",
    )
    # The build context is filtered by Dockerfile.dockerignore: whatever a
    # COPY takes must be let through.
    allowed = [
        line[1:]
        for line in (source_dir / "deploy/docker/Dockerfile.dockerignore").read_text().splitlines()
        if line.startswith("!")
    ]
    for stage in dockerfile.order:
        for source in dockerfile.image_paths(stage, Path(".")).values():
            source = str(source)
            check((source_dir / source).exists(), f"{name}: COPY of {source}, which does not exist")
            check(
                any(source == kept or source.startswith(kept + "/") for kept in allowed),
                f"{name}: COPY of {source}, which Dockerfile.dockerignore leaves out",
            )


# ---- portico -t ----------------------------------------------------------------


def validate_config(portico, text, image_paths, label):
    """`portico -t` on a config written for the image: the image's paths are
    read from the repository files the Dockerfile copies there."""
    for image_path, repository_path in sorted(image_paths.items(), key=lambda item: -len(item[0])):
        text = text.replace(f'"{image_path}"', f'"{repository_path}"')
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "portico.toml"
        path.write_text(text)
        result = subprocess.run(
            [portico, "-t", "-c", str(path)], capture_output=True, text=True, timeout=30
        )
    check(
        result.returncode == 0, f"{label}: portico -t refuses it:\n{result.stdout}{result.stderr}"
    )


def resolved_servers(config):
    """(upstream, host, port) of every server that portico resolves again."""
    found = []
    for name, upstream in config.get("upstream", {}).items():
        if seconds(upstream.get("resolve", "0s")) == 0:
            continue
        for server in upstream["servers"]:
            host, port = server.rsplit(":", 1)
            found.append((name, host, int(port)))
    return found


# ---- Compose -------------------------------------------------------------------


def check_compose(path, dockerfile, source_dir, portico):
    name = "deploy/docker/compose.yml"
    compose = yaml.safe_load(path.read_text())
    services = compose.get("services", {})
    for service_name in ("app", "portico"):
        if not check(service_name in services, f"{name}: no service {service_name}"):
            return
        build = services[service_name].get("build", {})
        context = (path.parent / build.get("context", ".")).resolve()
        check(
            context == source_dir.resolve(),
            f"{name}: {service_name} builds from {context}, not the repository",
        )
        check(
            (context / build.get("dockerfile", "Dockerfile")).resolve()
            == (source_dir / "deploy/docker/Dockerfile").resolve(),
            f"{name}: {service_name} does not build deploy/docker/Dockerfile",
        )
        check(
            build.get("target") in dockerfile.stages,
            f"{name}: {service_name} builds an unknown target",
        )
    app, front = services["app"], services["portico"]
    mounts = {volume.split(":")[1]: volume.split(":")[0] for volume in front.get("volumes", [])}
    config_file = path.parent / mounts.get("/etc/portico/portico.toml", "missing")
    if not check(
        config_file.is_file(),
        f"{name}: portico does not mount a portico.toml at /etc/portico/portico.toml",
    ):
        return
    text = config_file.read_text()
    config = tomllib.loads(text)
    validate_config(
        portico, text, dockerfile.image_paths("portico", source_dir), f"{name}: {config_file.name}"
    )
    published = {int(str(port).rsplit(":", 1)[1]) for port in front.get("ports", [])}
    for address in config["server"]["listen"] + [config["metrics"]["listen"]]:
        check(
            port_of(address) in published,
            f"{name}: portico's port {port_of(address)} is not published",
        )
    check(
        seconds(front.get("stop_grace_period", "10s"))
        > seconds(config["server"].get("shutdown_timeout", "30s")),
        f"{name}: stop_grace_period does not leave shutdown_timeout to the drain",
    )
    check("app" in front.get("depends_on", {}), f"{name}: portico does not depend on app")
    app_port = dict(
        arg.split("=") for env in dockerfile.instructions("demo-app", "ENV") for arg in env.split()
    ).get("PORT")
    targets = resolved_servers(config)
    check(targets, f"{name}: no upstream with resolve")
    for upstream, host, port in targets:
        check(host in services, f"{name}: upstream {upstream} resolves {host}, not a service")
        check(
            str(port) == app_port,
            f"{name}: upstream {upstream} uses port {port}, the app listens on {app_port}",
        )
    return config


# ---- Kubernetes ----------------------------------------------------------------

API_VERSIONS = {"ConfigMap": "v1", "Service": "v1", "Deployment": "apps/v1"}


def container_ports(pod_spec):
    """containerPort by name and number, over every container."""
    ports = {}
    for container in pod_spec["containers"]:
        for port in container.get("ports", []):
            ports[port["containerPort"]] = port["containerPort"]
            if "name" in port:
                ports[port["name"]] = port["containerPort"]
    return ports


def check_deployment(deployment, label, configmaps):
    spec = deployment["spec"]
    template = spec["template"]
    labels = template["metadata"].get("labels", {})
    check(
        spec["selector"]["matchLabels"].items() <= labels.items(),
        f"{label}: the selector does not match the pod labels",
    )
    pod = template["spec"]
    ports = container_ports(pod)
    for container in pod["containers"]:
        where = f"{label} container {container.get('name')}"
        check(container.get("image"), f"{where}: no image")
        requests = container.get("resources", {}).get("requests", {})
        check("cpu" in requests and "memory" in requests, f"{where}: no cpu and memory requests")
        for probe in ("readinessProbe", "livenessProbe"):
            if probe in container:
                port = container[probe].get("httpGet", {}).get("port")
                check(port in ports, f"{where}: the {probe} port {port} is no containerPort")
    volumes = {volume["name"]: volume for volume in pod.get("volumes", [])}
    for volume in volumes.values():
        if "configMap" in volume:
            check(
                volume["configMap"]["name"] in configmaps,
                f"{label}: volume {volume['name']} names an unknown ConfigMap",
            )
    return ports


def check_portico_deployment(deployment, label, config, configmap_name):
    pod = deployment["spec"]["template"]["spec"]
    ports = container_ports(pod)
    container = pod["containers"][0]
    metrics_port = port_of(config["metrics"]["listen"])
    for address in config["server"]["listen"]:
        check(
            port_of(address) in ports.values(),
            f"{label}: listen port {port_of(address)} is no containerPort",
        )
    for probe in ("readinessProbe", "livenessProbe"):
        get = container.get(probe, {}).get("httpGet", {})
        check(
            get.get("path") == "/healthz" and ports.get(get.get("port")) == metrics_port,
            f"{label}: {probe} does not ask /healthz on the metrics port {metrics_port}",
        )
    annotations = deployment["spec"]["template"]["metadata"].get("annotations", {})
    check(
        annotations.get("prometheus.io/scrape") == "true",
        f"{label}: no prometheus.io/scrape annotation on the pod",
    )
    check(
        annotations.get("prometheus.io/port") == str(metrics_port),
        f"{label}: prometheus.io/port is not {metrics_port}",
    )
    pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
    pause = int(pre_stop[1]) if len(pre_stop) == 2 and pre_stop[0] == "sleep" else None
    if check(pause is not None, f"{label}: no preStop sleep"):
        grace = pod.get("terminationGracePeriodSeconds", 30)
        drain = seconds(config["server"].get("shutdown_timeout", "30s"))
        check(
            grace > pause + drain,
            f"{label}: terminationGracePeriodSeconds {grace} does not cover "
            f"preStop {pause} s + shutdown_timeout {drain} s",
        )
    config_path = container.get("args", [None, None])[-1]
    mounted = [
        mount
        for mount in container.get("volumeMounts", [])
        if config_path and config_path.startswith(mount["mountPath"].rstrip("/") + "/")
    ]
    volumes = {volume["name"]: volume for volume in pod.get("volumes", [])}
    check(
        mounted
        and volumes.get(mounted[0]["name"], {}).get("configMap", {}).get("name") == configmap_name,
        f"{label}: -c {config_path} is not in the mounted ConfigMap {configmap_name}",
    )


def check_kubernetes(folder, dockerfile, source_dir, portico):
    documents = []
    for path in sorted(folder.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if document is None:
                continue
            name = document.get("metadata", {}).get("name")
            label = f"deploy/k8s/{path.name}: {document.get('kind')} {name}"
            check(document.get("kind") in API_VERSIONS, f"{label}: unexpected kind")
            check(
                document.get("apiVersion") == API_VERSIONS.get(document.get("kind")),
                f"{label}: apiVersion should be {API_VERSIONS.get(document.get('kind'))}",
            )
            check(name, f"{label}: no metadata.name")
            documents.append((label, document))
    by_kind = lambda kind: [
        (label, document) for label, document in documents if document["kind"] == kind
    ]
    configmaps = {document["metadata"]["name"]: document for _, document in by_kind("ConfigMap")}
    portico_config = None
    for label, configmap in by_kind("ConfigMap"):
        text = configmap.get("data", {}).get("portico.toml")
        if check(text, f"{label}: no portico.toml"):
            validate_config(portico, text, dockerfile.image_paths("portico", source_dir), label)
            portico_config = (configmap["metadata"]["name"], tomllib.loads(text))
    if not check(portico_config, "deploy/k8s: no ConfigMap with portico.toml"):
        return
    configmap_name, config = portico_config
    pods = {}
    for label, deployment in by_kind("Deployment"):
        ports = check_deployment(deployment, label, configmaps)
        pods[label] = (deployment["spec"]["template"]["metadata"].get("labels", {}), ports)
        if deployment["metadata"]["name"] == "portico":
            check_portico_deployment(deployment, label, config, configmap_name)
        else:
            env = {
                item["name"]: item.get("value")
                for container in deployment["spec"]["template"]["spec"]["containers"]
                for item in container.get("env", [])
            }
            check(
                env.get("HOST") == "0.0.0.0",
                f"{label}: the app does not listen on every interface (HOST)",
            )
    services = {}
    for label, service in by_kind("Service"):
        selector = service["spec"].get("selector", {})
        matching = [ports for labels, ports in pods.values() if selector.items() <= labels.items()]
        if check(selector and matching, f"{label}: the selector matches no Deployment's pods"):
            for port in service["spec"]["ports"]:
                check(
                    port.get("targetPort", port["port"]) in matching[0],
                    f"{label}: targetPort {port.get('targetPort')} is no containerPort",
                )
        services[service["metadata"]["name"]] = (label, service)
    targets = resolved_servers(config)
    check(targets, "deploy/k8s: portico.toml has no upstream with resolve")
    for upstream, host, port in targets:
        label, service = services.get(host.split(".")[0], (None, None))
        if check(service, f"deploy/k8s: upstream {upstream} resolves {host}, which is no Service"):
            check(
                service["spec"].get("clusterIP") == "None",
                f"{label}: not headless (clusterIP: None), so {host} has one virtual address",
            )
            check(
                port in [entry["port"] for entry in service["spec"]["ports"]],
                f"{label}: no port {port}",
            )


def main():
    portico, source_dir = sys.argv[1], Path(sys.argv[2]).resolve()
    dockerfile = Dockerfile(source_dir / "deploy/docker/Dockerfile")
    docker_text = (source_dir / "deploy/docker/portico.toml").read_text()
    validate_config(
        portico,
        docker_text,
        dockerfile.image_paths("portico", source_dir),
        "deploy/docker/portico.toml",
    )
    check_dockerfile(dockerfile, source_dir, tomllib.loads(docker_text))
    check_compose(source_dir / "deploy/docker/compose.yml", dockerfile, source_dir, portico)
    check_kubernetes(source_dir / "deploy/k8s", dockerfile, source_dir, portico)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print("deploy/docker and deploy/k8s: every check passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
