#include "metrics/status_codes.hpp"

namespace portico::metrics {

std::string status_label(size_t slot) {
    if (slot < first_class_status) return std::to_string(registered_status_codes[slot]);
    if (slot < other_status) return std::to_string(slot - first_class_status + 1) + "xx";
    return "other";
}

int status_class(size_t slot) {
    if (slot < first_class_status) return registered_status_codes[slot] / 100;
    if (slot < other_status) return static_cast<int>(slot - first_class_status + 1);
    return 0;
}

}  // namespace portico::metrics
