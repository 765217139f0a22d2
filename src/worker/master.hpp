// The master process: binds the listening sockets, forks the workers, keeps
// them running, and turns signals into reloads and shutdowns. It serves no
// traffic and runs no libuv loop (a forked child must not inherit one): a
// signalfd and poll(2) are all it needs.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "access/limit_zones.hpp"
#include "cache/cache_zones.hpp"
#include "acme/board.hpp"
#include "acme/staple_board.hpp"
#include "config/config.hpp"
#include "core/unique_fd.hpp"
#include "worker/admin_endpoint.hpp"
#include "metrics/saved_snapshots.hpp"
#include "metrics/shared_counters.hpp"
#include "tls/certificate_expiry.hpp"
#include "tls/server_tls.hpp"
#include "tls/ticket_keys.hpp"
#include "tls/upstream_tls.hpp"

namespace portico::worker {

class Master {
public:
    Master(std::string config_path, std::unique_ptr<config::Config> config);
    int run();  // returns the process exit code

private:
    struct WorkerProcess {
        pid_t pid = -1;
        unsigned slot = 0;
        unsigned generation = 0;
        int64_t started_ms = 0;
        bool draining = false;
        unsigned counter_slot = 0;
        bool accepting = false;  // it said so on the ready pipe
    };
    struct SlotState {
        unsigned quick_exits = 0;  // exits soon after start, in a row: the back-off
        int64_t restart_at_ms = -1;
    };
    // One SO_REUSEPORT socket per `listen` entry per worker slot (a slot
    // may hold more after a reload that lowered `workers`).
    struct ListenSocket {
        sockaddr_storage bound;  // the address the kernel gave it (the real port)
        unsigned slot;
        core::UniqueFd fd;
        bool tls = false;  // a [tls] listen entry
        bool proxy_protocol = false;  // as the current config's entry says
        unsigned listener = 0;        // which entry (config::listeners_of's index)
    };

    bool open_sockets(const config::Config& config);
    // The config's certificates loaded (errors and warnings logged).
    // [tls]'s certificates (the sites with `acme = true` fed by the board)
    // and the upstreams' TLS contexts; false (logged) when a file does not load.
    bool load_tls(const config::Config& config, const acme::Board* acme_board,
                  std::unique_ptr<tls::ServerTls>& out,
                  std::unique_ptr<tls::UpstreamTlsSet>& upstream_out);
    void rotate_ticket_keys_when_due();
    bool open_metrics(const config::Config& config);
    // /stats' certificate members: "\"acme\":{...}" and "\"tls\":{...}" (the
    // file certificates), each when there is one, joined by a comma.
    std::string certificate_stats() const;
    // A board for `config`'s sites when it has [acme] (else nullptr).
    std::unique_ptr<acme::Board> make_acme_board(const config::Config& config);
    // Stops the ACME process of the previous config and starts config_'s.
    void restart_acme_process();
    void prepare_for_workers(const config::Config& config);
    void read_ready_reports();
    void notify_ready_once_accepting();
    void reload_failed(const std::string& why);
    bool workers_accepting() const;
    bool spawn(unsigned slot);
    void handle_signal(int signum);
    void reap_children();
    void reload();
    void begin_shutdown();
    void start_due_restarts();
    int poll_timeout_ms() const;
    bool workers_left() const;
    void signal_workers(int signum, bool old_generation_only = false);

    std::string config_path_;
    std::unique_ptr<config::Config> config_;
    std::vector<ListenSocket> sockets_;
    std::vector<WorkerProcess> workers_;
    std::vector<SlotState> slots_;
    unsigned generation_ = 0;
    core::UniqueFd signal_fd_;
    // Workers write their pid here once they accept (see run_worker).
    core::UniqueFd ready_read_;
    core::UniqueFd ready_write_;
    // READY=1 is owed to systemd: at start and after a good reload, until
    // every worker of the generation accepts.
    bool ready_pending_ = false;
    std::unique_ptr<metrics::SharedCounters> counters_;
    // The limits' tables, shared with the workers (access/limit_zones.hpp).
    std::unique_ptr<access::LimitZones> limits_;
    std::unique_ptr<cache::CacheZones> caches_;
    // Made once, before the first fork, and kept across reloads: a reload
    // does not end every client's session.
    std::unique_ptr<tls::TicketKeys> ticket_keys_;
    int64_t next_key_rotation_ms_ = INT64_MAX;
    // What the ACME process publishes (certificates, challenges, state),
    // read by the workers; of config_, when it has [acme]. Before tls_,
    // whose contexts read it, so it goes after them.
    std::unique_ptr<acme::Board> acme_board_;
    pid_t acme_pid_ = -1;
    int64_t acme_restart_at_ms_ = -1;      // after the ACME process died
    // The OCSP responses the ACME process fetches, stapled by tls_'s
    // contexts (so made before tls_ and gone after it); nullptr: none to staple.
    std::unique_ptr<acme::StapleBoard> staple_board_;
    std::unique_ptr<tls::ServerTls> tls_;  // of config_, when it has [tls]
    std::unique_ptr<tls::UpstreamTlsSet> upstream_tls_;  // of config_
    std::vector<tls::FileCertificate> file_certificates_;  // of config_, for /stats
    AdminEndpoint metrics_;
    // Here, not in the endpoint, so a reload that moves the listener keeps them.
    metrics::SavedSnapshots snapshots_;
    bool stopping_ = false;
    int64_t stop_deadline_ms_ = 0;
    bool done_ = false;
    int exit_code_ = 0;
};

}  // namespace portico::worker
