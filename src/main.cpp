// portico: the command line only. Everything else starts in worker/master.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "cli/convert_command.hpp"
#include "cli/stats_command.hpp"
#include "config/config.hpp"
#include "tls/server_tls.hpp"
#include "tls/upstream_tls.hpp"
#include "worker/error_log.hpp"
#include "worker/master.hpp"

namespace {

constexpr const char* usage =
    "usage: portico [-c FILE]      run in the foreground (default conf/portico.toml)\n"
    "       portico -t [-c FILE]   check the configuration and exit (0 valid, 1 not)\n"
    "       portico stats [--url http://127.0.0.1:9145] [--watch 1s | --compare A B]\n"
    "                              per-location table from a running portico's /stats,\n"
    "                              or two saved snapshots side by side\n"
    "       portico convert [--prefix DIR] nginx.conf\n"
    "                              an nginx config as a portico config on stdout,\n"
    "                              what cannot be translated on stderr (exit 2)\n"
    "       portico --version\n";

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "stats") == 0)
        return portico::cli::run_stats_command(argc - 1, argv + 1);
    if (argc > 1 && std::strcmp(argv[1], "convert") == 0)
        return portico::cli::run_convert_command(argc - 1, argv + 1);
    std::string config_path = "conf/portico.toml";
    bool test_only = false;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--version" || arg == "-v") {
            std::printf("portico %s\n", PORTICO_VERSION);
            return 0;
        } else if (arg == "-t") {
            test_only = true;
        } else if (arg == "-c" && i + 1 < argc) {
            config_path = argv[++i];
        } else if (arg == "-h" || arg == "--help") {
            std::fputs(usage, stdout);
            return 0;
        } else {
            std::fprintf(stderr, "portico: unknown argument '%s'\n%s", arg.c_str(), usage);
            return 2;
        }
    }

    portico::config::LoadResult loaded = portico::config::load_config_file(config_path);
    for (const portico::config::ConfigError& error : loaded.errors)
        std::fprintf(stderr, "%s\n", error.to_string().c_str());
    if (!loaded.config) {
        std::fprintf(stderr, "portico: configuration %s has %zu problem(s)\n", config_path.c_str(),
                     loaded.errors.size());
        return 1;
    }
    if (test_only) {
        // The certificates too: a -t that passes must mean a reload would.
        portico::tls::UpstreamTlsSet::Loaded upstream_tls =
            portico::tls::UpstreamTlsSet::load(*loaded.config);
        for (const portico::config::ConfigError& error : upstream_tls.errors)
            std::fprintf(stderr, "%s\n", error.to_string().c_str());
        if (!upstream_tls.set) {
            std::fprintf(stderr, "portico: configuration %s has %zu problem(s)\n",
                         config_path.c_str(), upstream_tls.errors.size());
            return 1;
        }
        if (loaded.config->tls) {
            portico::tls::ServerTls::Loaded tls =
                portico::tls::ServerTls::load(*loaded.config, nullptr);
            for (const std::string& warning : tls.warnings)
                std::fprintf(stderr, "portico: warning: %s\n", warning.c_str());
            for (const portico::config::ConfigError& error : tls.errors)
                std::fprintf(stderr, "%s\n", error.to_string().c_str());
            if (!tls.tls) {
                std::fprintf(stderr, "portico: configuration %s has %zu problem(s)\n",
                             config_path.c_str(), tls.errors.size());
                return 1;
            }
        }
        std::printf("portico: configuration %s is valid\n", config_path.c_str());
        return 0;
    }
    auto config = std::make_unique<portico::config::Config>(std::move(*loaded.config));
    portico::worker::open_error_log(config->log, "master");
    portico::worker::Master master(config_path, std::move(config));
    return master.run();
}
