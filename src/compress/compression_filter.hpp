// compress = ...: a location's response filter (http/response_filter.hpp).
// Its streams (compress/compression_stream.hpp) decide per request whether
// the response may be compressed at all, negotiate the coding, and compress
// the response. One per compressing location per worker.
#pragma once

#include <memory>

#include "compress/compressed_cache.hpp"
#include "compress/encoder_memory.hpp"
#include "config/config.hpp"
#include "core/buffer_pool.hpp"
#include "http/response_filter.hpp"
#include "metrics/worker_counters.hpp"

namespace portico::compress {

class CompressionFilter final : public http::ResponseFilter {
public:
    // `cache`: the worker's compressed bodies; `blocks`: where a stream's
    // output block comes from (its size bounds a stream's output memory);
    // `memory`: the worker's encoder memory, reused from stream to stream.
    CompressionFilter(const config::CompressConfig& config, CompressedCache& cache,
                      core::BufferPool& blocks, EncoderMemory& memory,
                      metrics::WorkerCounters& counters)
        : config_(config), cache_(cache), blocks_(blocks), memory_(memory), counters_(counters) {}

    const config::CompressConfig& config() const { return config_; }
    CompressedCache& cache() { return cache_; }
    core::BufferPool& blocks() { return blocks_; }
    EncoderMemory& memory() { return memory_; }
    // A response compressed on the fly is out: `in` body bytes became
    // `out`; `cached`: the compressed cache had them.
    void count(config::Coding coding, uint64_t in, uint64_t out, bool cached) {
        counters_.response_compressed(coding, in, out, cached);
    }

protected:
    std::unique_ptr<http::FilterStream> new_stream() override;

private:
    const config::CompressConfig& config_;
    CompressedCache& cache_;
    core::BufferPool& blocks_;
    EncoderMemory& memory_;
    metrics::WorkerCounters& counters_;
};

}  // namespace portico::compress
