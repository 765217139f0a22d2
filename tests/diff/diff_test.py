#!/usr/bin/python3
"""Differential test: portico answers like nginx. One scenario (a real
nginx config for a Node app, tests/diff/scenarios/NAME.py, and its portico
twin) runs against Debian's nginx and against portico, both serving a copy
of the same www folder before the same echo app (upstream.py); the same
requests go to both and their answers are compared: status, Location, the
headers the scenario names, the body, and for proxied requests what the app
RECEIVED (method, target, the headers the scenario names). Every request
also says what the config intends, checked on nginx as on portico, so a
difference tells which side is wrong.

    tests/diff/diff_test.py NAME [--portico BUILD/portico] [--nginx /usr/sbin/nginx]
    tests/diff/diff_test.py NAME --nginx-only      (the nginx side alone)
    tests/diff/diff_test.py --convert NAME ...     (tests/convert/NAME.conf: nginx runs
                                                    it, portico what `portico convert` made)

The binary: --portico, else $PORTICO_BIN. Exit 0 same answers, 1 a
difference or an unmet intention, 77 (skipped) without nginx. Loopback
only; every process started here is stopped by its pid.
"""
import argparse
import importlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
from client import fetch  # noqa: E402
from compare import reduce, side_by_side, unmet_expectations  # noqa: E402
from scenario import Context  # noqa: E402
from servers import free_port, start_nginx, start_portico  # noqa: E402
from upstream import Upstream  # noqa: E402

SKIP = 77


def answers_of(start, binary, scenario, folder, www, upstreams, dead_port):
    """{request index: (reduced answer, app instance)} from one server."""
    folder.mkdir()
    port = free_port()
    context = Context(folder, port, www, upstreams, dead_port)
    config = scenario.nginx(context) if start is start_nginx else scenario.portico(context)
    server = start(binary, folder, port, config, getattr(scenario, "FULL_FILES", False))
    try:
        answers = []
        for request in scenario.REQUESTS:
            sent = request.for_port(port)
            answers.append(reduce(fetch(port, sent), sent, port, scenario))
        return answers
    finally:
        server.stop()


def describe(request):
    host = "(no Host)" if request.host is None else f"Host: {request.host}"
    return f"{request.method} {request.target} {host}"


def report(scenario, www, results):
    """Prints each request's outcome; returns whether all went as intended
    and equal. results: {server name: answers}. A request marked
    known_difference (portico differs, and the lead knows why) fails only
    when nginx misses the intent, or when portico stops differing (then
    the mark must go, so the request checks again)."""
    good, known = True, 0
    for i, request in enumerate(scenario.REQUESTS):
        unmet = {name: unmet_expectations(answers[i][0], request, www)
                 for name, answers in results.items()}
        differs = len(results) == 2 and results["nginx"][i][0] != results["portico"][i][0]
        if request.known_difference and len(results) == 2:
            if differs and not unmet["nginx"]:
                print(f"KNOWN {describe(request)}: {request.known_difference}")
                print(side_by_side(results["nginx"][i][0], results["portico"][i][0]))
                known += 1
                continue
            if not differs:
                good = False
                print(f"FAIL  {describe(request)}: portico now answers like nginx, "
                      "drop its known_difference")
                continue
        if not differs and not any(unmet.values()):
            print(f"ok    {describe(request)} -> {results['nginx'][i][0]['status']}")
            continue
        good = False
        print(f"FAIL  {describe(request)}")
        for name, problems in unmet.items():
            for problem in problems:
                print(f"      {name} does not answer as the config intends: {problem}")
        if len(results) == 2:
            print(side_by_side(results["nginx"][i][0], results["portico"][i][0]))
    check = getattr(scenario, "check", lambda answers: [])
    for name, answers in results.items():
        for problem in check(answers):
            good = False
            print(f"FAIL  {name}: {problem}")
    return good, known


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenario")
    parser.add_argument("--portico", default=os.environ.get("PORTICO_BIN"))
    parser.add_argument("--nginx", default="/usr/sbin/nginx")
    parser.add_argument("--nginx-only", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder (configs, logs)")
    parser.add_argument("--convert", action="store_true",
                        help="NAME is a tests/convert/NAME.conf case of portico convert")
    args = parser.parse_args()
    if not os.access(args.nginx, os.X_OK):
        print(f"skipped: no nginx at {args.nginx} (deploy/install-deps.sh --test installs it)")
        return SKIP
    if not args.nginx_only and not args.portico:
        parser.error("the portico binary: --portico or $PORTICO_BIN")
    if args.convert:
        from convert_case import ConvertScenario
        scenario = ConvertScenario(args.scenario, args.portico)
    else:
        scenario = importlib.import_module(f"scenarios.{args.scenario.replace('-', '_')}")

    folder = Path(tempfile.mkdtemp(prefix=f"portico-diff-{args.scenario}-"))
    www = folder / "www"
    scenario.make_www(www)
    upstreams = {name: Upstream(name, folder / f"{name}.sock" if kind == "unix" else None)
                 for name, kind in scenario.UPSTREAMS.items()}
    try:
        dead_port = free_port()
        servers = {"nginx": (start_nginx, args.nginx)}
        if not args.nginx_only:
            servers["portico"] = (start_portico, args.portico)
        addresses = {name: upstream.address for name, upstream in upstreams.items()}
        results = {name: answers_of(start, binary, scenario, folder / name, www, addresses,
                                    dead_port)
                   for name, (start, binary) in servers.items()}
        good, known = report(scenario, www, results)
    except RuntimeError as error:
        print(f"FAIL  {error}")
        good, known = False, 0
    finally:
        for upstream in upstreams.values():
            upstream.stop()
        if args.keep:
            print(f"kept: {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"{args.scenario}: {'same answers' if good else 'DIFFERENT'}"
          f"{f' but {known} known difference(s)' if known else ''}"
          f"{' (nginx only)' if args.nginx_only else ''}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
