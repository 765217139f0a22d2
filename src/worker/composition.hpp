// What a worker serves with, composed from the config: its upstream pools,
// its caches, the steps a request takes before its content, and each
// location's handlers and response filter, wired into the ServerContext's
// tables that both HTTP codecs walk (http/request_routing.hpp). The only
// place that names the handlers and filters (nginx's module list, H2O's
// per-path handler chain): http/ knows only the Handler and ResponseFilter
// interfaces.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "access/limit_zones.hpp"
#include "access/password_verifier.hpp"
#include "cache/location_caches.hpp"
#include "compress/compressed_cache.hpp"
#include "compress/encoder_memory.hpp"
#include "core/buffer_pool.hpp"
#include "http/admission.hpp"
#include "http/location_headers.hpp"
#include "http/server_context.hpp"
#include "proxy/upstream.hpp"
#include "static/file_cache.hpp"
#include "static/location_files.hpp"
#include "static/mime.hpp"
#include "tls/upstream_tls.hpp"

namespace portico::rules {
class ErrorPages;
}

namespace portico::acme {
class Board;
}

namespace portico::worker {

class Composition {
public:
    // Fills `server.server_steps` and `server.serving`; `server` must
    // outlive the composition. `https_port`: where redirect_http sends
    // clients (the TLS listener's port, as bound). `limits`: the tables the
    // limits share with the other workers. `upstream_tls`: the contexts of
    // the upstreams with `tls`, which must outlive it (nullptr: the config
    // has none). `acme_board`: where the ACME process publishes the HTTP-01
    // challenges (nullptr: no [acme]). `caches`: the response cache's
    // stores (nullptr: none).
    Composition(http::ServerContext& server, uint16_t https_port, const access::LimitZones& limits,
                const tls::UpstreamTlsSet* upstream_tls = nullptr,
                const acme::Board* acme_board = nullptr, const cache::CacheZones* caches = nullptr);
    ~Composition();
    Composition(const Composition&) = delete;
    Composition& operator=(const Composition&) = delete;

    staticfiles::FileCache& file_cache() { return file_cache_; }
    // upstreams()[i] is config.upstreams[i] in this worker.
    std::vector<std::unique_ptr<proxy::Upstream>>& upstreams() { return upstreams_; }

private:
    // What Config::locations[location_index]'s requests must pass before its
    // content (limits, access rules, auth); nullptr: nothing.
    std::unique_ptr<http::AdmissionGate> admission_gate(http::ServerContext& server,
                                                        size_t location_index,
                                                        const access::LimitZones& limits);

    // What the proxy reads from upstreams: 64 KiB, so a large response takes
    // few read/writev pairs (nginx's proxy_buffers are 8 x 8 KiB).
    core::BufferPool upstream_buffers_{64 * 1024};
    staticfiles::MimeTypes mime_;
    staticfiles::FileCache file_cache_;
    // Static bodies compressed whole, for every compress location: a hot
    // asset is compressed once, not per request (compress/compressed_cache.hpp).
    compress::CompressedCache compressed_cache_{32 * 1024 * 1024};
    // The state of finished gzip and br streams, for the next ones (no page
    // faults per response; compress/encoder_memory.hpp). Declared before
    // the filters, whose encoders give it back when they go.
    compress::EncoderMemory encoder_memory_{8 * 1024 * 1024};
    std::vector<std::unique_ptr<proxy::Upstream>> upstreams_;
    // The root or alias folder of each static location, opened once.
    std::vector<std::unique_ptr<staticfiles::LocationFiles>> location_files_;
    // Only when a location has error_pages; before the filters that use it.
    std::unique_ptr<rules::ErrorPages> error_pages_;
    // Requests that wait at a location's admission checks (a limit's delay).
    http::WaitingPool waiting_;
    // Basic auth's password hashes, off the loop, and their answers
    // remembered (shared by the worker's auth locations).
    access::PasswordVerifier passwords_;
    // Each cache location's handler state and filter, and the worker's
    // copies of the zones' objects.
    cache::LocationCaches caches_;
    // Declared last: they refer to the members above.
    std::vector<std::unique_ptr<http::AdmissionGate>> gates_;
    std::vector<std::unique_ptr<http::RequestStep>> steps_;
    std::vector<std::unique_ptr<http::Handler>> handlers_;
    std::vector<std::unique_ptr<http::ResponseFilter>> filters_;
    std::vector<std::unique_ptr<http::LocationHeaders>> location_headers_;
};

}  // namespace portico::worker
