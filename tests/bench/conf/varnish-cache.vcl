# Varnish for side_by_side.py's cache scenario: the demo app as the one
# backend, and Varnish's built-in VCL for everything else (what a default
# install caches: GET and HEAD without Cookie or Authorization, for the TTL
# the backend's Cache-Control gives: the demo app sends public,
# max-age=3600 with CACHE_CONTROL). Backend connections are kept alive and
# reused by default. Started by the harness as
#   taskset -c 1 varnishd -F -n RUN/varnish -a 127.0.0.1:PORT -f THIS -T none
#     -s malloc,256m -p thread_pools=1
# (the manager process forks the cache process, which runs the thread pool).
vcl 4.1;

backend app {
    .host = "127.0.0.1";
    .port = "@APP_PORT@";
}
