"""A small HTTP/2 client over a real socket, for the soak (soak.py): hyper-h2
(Debian's python3-h2) does the framing, HPACK and the flow-control
bookkeeping; this keeps several streams in flight on one connection (TLS
with ALPN h2, or h2c with prior knowledge), sends request bodies as the
windows open, and hands back each stream's end."""
import socket
import ssl

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions


class GracefulConnection(h2.connection.H2Connection):
    """hyper-h2 closes its connection state machine on any GOAWAY
    (python-hyper/h2 issue 1181, open), so the frames of the streams a
    draining server still finishes would raise ProtocolError, and every
    reload would look like a cut. RFC 9113 6.8: streams up to the GOAWAY's
    last stream id may still complete. A NO_ERROR GOAWAY is reported and
    leaves the connection open; Connection opens no new stream after it."""

    def _receive_goaway_frame(self, frame):
        if frame.error_code != h2.errors.ErrorCodes.NO_ERROR:
            return super()._receive_goaway_frame(frame)
        event = h2.events.ConnectionTerminated()
        event.error_code = h2.errors.ErrorCodes.NO_ERROR
        event.last_stream_id = frame.last_stream_id
        event.additional_data = frame.additional_data or None
        return [], [event]


def code_name(code):
    """An error code's name; hyper-h2 leaves a code it does not know an int."""
    return getattr(code, "name", str(code))


class ProtocolFailure(Exception):
    """The server broke the connection off as an error (a GOAWAY with an
    error code, or frames hyper-h2 refuses): no injected fault does that.
    ended: the streams that ended before it in the same read."""

    def __init__(self, why):
        super().__init__(why)
        self.ended = []


class StreamEnd:
    """How one stream ended: seen whole (status, headers, body), cut (why),
    or refused: never processed by the server (above a GOAWAY's last stream
    id, or RST_STREAM REFUSED_STREAM), so it may be sent again (RFC 9113 8.7)."""

    def __init__(self, tag, status=None, headers=None, body=b"", why=None, refused=False):
        self.tag, self.status, self.headers, self.body = tag, status, headers or {}, body
        self.why, self.refused = why, refused


class Connection:
    """One client connection to 127.0.0.1:port. tls_ca: the CA file to
    verify the server with, TLS and ALPN h2; None: h2c, prior knowledge."""

    def __init__(self, port, tls_ca=None, timeout=10):
        sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        if tls_ca:
            context = ssl.create_default_context(cafile=tls_ca)
            context.set_alpn_protocols(["h2"])
            try:
                sock = context.wrap_socket(sock, server_hostname="127.0.0.1")
            except BaseException:
                sock.close()
                raise
            if sock.selected_alpn_protocol() != "h2":
                sock.close()
                raise ProtocolFailure(f"ALPN chose {sock.selected_alpn_protocol()}, not h2")
        self.sock, self.port, self.scheme = sock, port, "https" if tls_ca else "http"
        self.local_port = sock.getsockname()[1]
        self.h2 = GracefulConnection(h2.config.H2Configuration(client_side=True,
                                                               header_encoding=None))
        self.streams = {}  # stream id -> [tag, status, headers, body pieces]
        self.unsent = {}   # stream id -> the request body its windows have not let out yet
        self.last_stream_id = None  # set by a NO_ERROR GOAWAY: no new streams
        self.send_error = None  # a failed write: no new streams, and the rest is read first
        self.h2.initiate_connection()
        self.flush()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.sock.close()

    def accepting(self):
        return self.last_stream_id is None and self.send_error is None

    def in_flight(self):
        return len(self.streams)

    def request(self, tag, method, path, headers=(), body=None):
        stream_id = self.h2.get_next_available_stream_id()
        head = [(":method", method), (":scheme", self.scheme),
                (":authority", f"127.0.0.1:{self.port}"), (":path", path)] + list(headers)
        if body is not None:
            head.append(("content-length", str(len(body))))
        self.h2.send_headers(stream_id, head, end_stream=body is None)
        self.streams[stream_id] = [tag, None, {}, []]
        if body is not None:
            self.unsent[stream_id] = body
            self.send_bodies()
        self.flush()

    def send_bodies(self):
        """As much of each request body as its stream's and the connection's
        windows let out (a 64 KiB POST outgrows a fresh stream's window)."""
        for stream_id, rest in list(self.unsent.items()):
            while rest:
                room = min(self.h2.local_flow_control_window(stream_id),
                           self.h2.max_outbound_frame_size)
                if room <= 0:
                    break
                self.h2.send_data(stream_id, rest[:room])
                rest = rest[room:]
            if rest:
                self.unsent[stream_id] = rest
            else:
                self.h2.end_stream(stream_id)
                del self.unsent[stream_id]

    def flush(self):
        data = self.h2.data_to_send()
        if data and not self.send_error:
            try:
                self.sock.sendall(data)
            except OSError as error:
                # A server that closed after its GOAWAY makes our next write
                # fail while that GOAWAY may still wait unread: read what it
                # sent (receive()) before giving up the streams in flight.
                self.send_error = error

    def receive(self):
        """Reads once what the server sent (waiting up to the timeout) and
        returns the streams that ended. OSError: the connection was cut or
        closed; ProtocolFailure: the server ended it with an error. Either
        way the streams still in flight are lost (abandon())."""
        try:
            data = self.sock.recv(65536)
        except OSError as error:
            raise self.send_error or error
        if not data:
            raise self.send_error or ConnectionResetError("closed by the server")
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError as error:
            raise ProtocolFailure(type(error).__name__) from error
        ended = []
        for event in events:
            try:
                ended += self.on_event(event)
            except ProtocolFailure as failure:
                failure.ended = ended
                raise
        self.send_bodies()
        self.flush()
        return ended

    def on_event(self, event):
        stream = self.streams.get(getattr(event, "stream_id", None))
        if isinstance(event, h2.events.ResponseReceived) and stream:
            stream[2] = dict(event.headers)
            stream[1] = int(stream[2][b":status"])
        elif isinstance(event, h2.events.DataReceived):
            if stream:
                stream[3].append(event.data)
            # Window given back at once: the soak checks bytes, not back-pressure.
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded) and stream:
            return [self.finish(event.stream_id)]
        elif isinstance(event, h2.events.StreamReset) and stream:
            refused = event.error_code == h2.errors.ErrorCodes.REFUSED_STREAM
            return [self.finish(event.stream_id, why=f"RST_STREAM {code_name(event.error_code)}",
                                refused=refused)]
        elif isinstance(event, h2.events.ConnectionTerminated):
            if event.error_code != h2.errors.ErrorCodes.NO_ERROR:
                raise ProtocolFailure(f"GOAWAY {code_name(event.error_code)}")
            return self.on_goaway(event.last_stream_id)
        return []

    def on_goaway(self, last_stream_id):
        """A drain: the streams above last_stream_id were not processed."""
        self.last_stream_id = min(last_stream_id, self.last_stream_id or last_stream_id)
        return [self.finish(stream_id, why="above GOAWAY's last stream id", refused=True)
                for stream_id in list(self.streams) if stream_id > self.last_stream_id]

    def finish(self, stream_id, why=None, refused=False):
        tag, status, headers, pieces = self.streams.pop(stream_id)
        if self.unsent.pop(stream_id, None) is not None and not why:
            # Answered before the whole body went out (a 502): stop sending it,
            # and free the stream's slot (RFC 9113 8.1).
            self.h2.reset_stream(stream_id, h2.errors.ErrorCodes.CANCEL)
        if why:
            return StreamEnd(tag, why=why, refused=refused)
        return StreamEnd(tag, status, {k.decode(): v.decode() for k, v in headers.items()},
                         b"".join(pieces))

    def abandon(self):
        """The tags of the streams in flight, given up with the connection."""
        tags = [stream[0] for stream in self.streams.values()]
        self.streams.clear()
        self.unsent.clear()
        return tags
