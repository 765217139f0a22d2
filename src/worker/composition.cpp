#include "worker/composition.hpp"

#include "access/location_gate.hpp"
#include "acme/challenge_step.hpp"
#include "compress/compression_filter.hpp"
#include "http/forwarded_client.hpp"
#include "http/https_redirect.hpp"
#include "http/location_headers.hpp"
#include "http/respond_handler.hpp"
#include "proxy/proxy_handler.hpp"
#include "rules/error_pages.hpp"
#include "rules/redirect_step.hpp"
#include "rules/rewrite_step.hpp"
#include "static/static_handler.hpp"
#include "static/try_files_step.hpp"

namespace portico::worker {

Composition::Composition(http::ServerContext& server, uint16_t https_port,
                         const access::LimitZones& limits, const tls::UpstreamTlsSet* upstream_tls,
                         const acme::Board* acme_board, const cache::CacheZones* caches)
    : mime_(server.config.mime),
      file_cache_(server.poller),
      waiting_(server.poller),
      passwords_(server.loop),
      caches_(caches, server) {
    // First: every later step, handler and log line sees the real client.
    if (!server.config.server.trusted_proxies.empty()) {
        steps_.push_back(
            std::make_unique<http::ForwardedClient>(server.config.server.trusted_proxies));
        server.server_steps.push_back(steps_.back().get());
    }
    // Before the https redirect: the CA asks over http.
    if (acme_board) {
        steps_.push_back(std::make_unique<acme::ChallengeStep>(*acme_board));
        server.server_steps.push_back(steps_.back().get());
    }
    if (server.config.tls && server.config.tls->redirect_http) {
        steps_.push_back(std::make_unique<http::HttpsRedirect>(https_port));
        server.server_steps.push_back(steps_.back().get());
    }
    for (const config::UpstreamConfig& upstream : server.config.upstreams)
        upstreams_.push_back(std::make_unique<proxy::Upstream>(
            server.poller, upstream, upstreams_.size(), server.counters,
            upstream_tls ? upstream_tls->of(upstreams_.size()) : nullptr));
    for (size_t i = 0; i < server.config.locations.size(); ++i) {
        const config::LocationConfig& location = server.config.locations[i];
        http::LocationServing& serving = server.serving[i];
        // Tried in this order: "root then proxy" is the file if it exists,
        // else the upstream.
        auto add = [&](std::unique_ptr<http::Handler> handler) {
            serving.handlers.push_back(handler.get());
            serving.streams_body = serving.streams_body || handler->streams_request_body();
            handlers_.push_back(std::move(handler));
        };
        auto add_step = [&](std::unique_ptr<http::RequestStep> step) {
            serving.steps.push_back(step.get());
            steps_.push_back(std::move(step));
        };
        // The checks come before the handlers: nothing serves a request
        // they refuse, and one that waits holds its body meanwhile.
        if (std::unique_ptr<http::AdmissionGate> gate = admission_gate(server, i, limits)) {
            serving.gate = gate.get();
            gates_.push_back(std::move(gate));
        }
        // nginx's phase order: rewrite, then try_files (precontent).
        if (location.redirect)
            add_step(std::make_unique<rules::RedirectStep>(*location.redirect, location));
        if (!location.rewrite.empty())
            add_step(std::make_unique<rules::RewriteStep>(location.rewrite));
        if (location.respond && location.respond->status == 444)
            add(std::make_unique<http::CloseHandler>());
        else if (location.respond)
            add(std::make_unique<http::RespondHandler>(*location.respond));
        if (location.root || location.alias) {
            location_files_.push_back(std::make_unique<staticfiles::LocationFiles>(location));
            const staticfiles::LocationFiles& files = *location_files_.back();
            if (location.try_files)
                add_step(std::make_unique<staticfiles::TryFilesStep>(location, files, file_cache_));
            add(std::make_unique<staticfiles::StaticHandler>(location, files, file_cache_, mime_));
        }
        // try_files' "@UPSTREAM" is the upstream after the files, as a proxy
        // on the location would be (the config allows only one of them).
        std::optional<size_t> upstream = location.upstream;
        if (location.try_files && location.try_files->upstream)
            upstream = location.try_files->upstream;
        // The cache answers before the proxy, and what the proxy sends
        // goes through its filter first (below).
        if (location.cache) add(caches_.make_handler(i, serving));
        if (upstream)
            add(std::make_unique<proxy::ProxyHandler>(*upstreams_[*upstream], location,
                                                      server.buffers, upstream_buffers_,
                                                      server.poller));
        // The filter closest to the client so far.
        http::ResponseFilter* closest = nullptr;
        if (!location.headers.empty()) {
            location_headers_.push_back(std::make_unique<http::LocationHeaders>(location));
            serving.headers = location_headers_.back().get();
        }
        if (location.compress) {
            // A compressing stream's output block is an upstream read's
            // size: one chunk per 64 KiB of compressed bytes at most.
            filters_.push_back(std::make_unique<compress::CompressionFilter>(
                *location.compress, compressed_cache_, upstream_buffers_, encoder_memory_,
                server.counters));
            serving.filter = filters_.back().get();
            // Behind it: a hit's coded variants are stored once per coding.
            closest = location.cache ? &caches_.put_behind_compression(i, *serving.filter)
                                     : serving.filter;
        }
        if (!location.error_pages.empty()) {
            if (!error_pages_) error_pages_ = std::make_unique<rules::ErrorPages>(server);
            auto filter =
                std::make_unique<rules::ErrorPageFilter>(location.error_pages, *error_pages_);
            rules::ErrorPageFilter& error_pages = *filter;
            filters_.push_back(std::move(filter));
            // Closest to the client: it sees the status the client would get.
            if (closest)
                closest->output_through(error_pages);
            else
                serving.filter = &error_pages;
            // Last: every step of the location answers through it.
            if (!serving.steps.empty()) {
                steps_.push_back(std::make_unique<rules::StepsThroughErrorPages>(
                    std::move(serving.steps), error_pages));
                serving.steps = {steps_.back().get()};
            }
        }
        // Closest to the handlers: it stores what they send, before
        // compression and error pages change it.
        if (location.cache) caches_.put_filter_first(i, serving);
    }
}

std::unique_ptr<http::AdmissionGate> Composition::admission_gate(http::ServerContext& server,
                                                                 size_t location_index,
                                                                 const access::LimitZones& limits) {
    const config::Config& config = server.config;
    const config::LocationConfig& location = config.locations[location_index];
    access::LocationGate::Checks checks;
    if (!location.limits.empty())
        checks.rate = std::make_unique<access::RateLimitCheck>(config, location_index, limits,
                                                               server.counters, server.loop);
    if (location.max_concurrent)
        checks.concurrency = std::make_unique<access::ConcurrencyLimitCheck>(
            config, location_index, limits.concurrency_table(), server.counters);
    if (!location.access.empty())
        checks.address =
            std::make_unique<access::AddressRulesCheck>(location, location_index, server.counters);
    if (location.auth)
        checks.auth = std::make_unique<access::BasicAuthCheck>(*location.auth, passwords_,
                                                               location_index, server.counters);
    if (!checks.rate && !checks.concurrency && !checks.address && !checks.auth) return nullptr;
    return std::make_unique<access::LocationGate>(waiting_, server.serving[location_index],
                                                  std::move(checks));
}

Composition::~Composition() = default;

}  // namespace portico::worker
