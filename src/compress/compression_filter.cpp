#include "compress/compression_filter.hpp"

#include "compress/compression_stream.hpp"

namespace portico::compress {

std::unique_ptr<http::FilterStream> CompressionFilter::new_stream() {
    return std::make_unique<CompressionStream>(*this);
}

}  // namespace portico::compress
