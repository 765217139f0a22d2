#include "http/respond_handler.hpp"

namespace portico::http {

bool RespondHandler::serve(Exchange& exchange) {
    exchange.respond_text(respond_.status, respond_.body);
    return true;
}

}  // namespace portico::http
