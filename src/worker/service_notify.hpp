// The master's side of systemd's Type=notify protocol (sd_notify(3)): the
// unit is "active" once the workers accept, "reloading" from SIGHUP until
// the new workers accept (or the reload failed), "deactivating" from a stop
// signal. Not started by systemd (no NOTIFY_SOCKET), each call does nothing.
#pragma once

#include <string>

namespace portico::worker::service_notify {

void ready(const std::string& status);
// With MONOTONIC_USEC: the moment the reload began, which systemd 253's
// Type=notify-reload matches against the SIGHUP it sent.
void reloading();
void stopping(const std::string& status);

}  // namespace portico::worker::service_notify
