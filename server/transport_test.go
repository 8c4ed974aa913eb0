package server_test

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"

	"github.com/sqpredict/sqpredict/server"
)

// serveOptions serves an empty gRPC server with ServerOptions(l) on 127.0.0.1:0 and
// returns a raw TCP connection to it.
func serveOptions(t *testing.T, l server.Limits) net.Conn {
	t.Helper()
	opts, err := server.ServerOptions(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(opts...)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	conn, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// A guard against a hung test, far above any limit a test sets.
	if err := conn.SetDeadline(time.Now().Add(60 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return conn
}

// clientFramer starts HTTP/2 on conn as a client (preface and empty settings) and
// returns its framer.
func clientFramer(t *testing.T, conn net.Conn) *http2.Framer {
	t.Helper()
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return fr
}

// TestKeepaliveEnforcement: a client pinging faster than KeepaliveMinTime is sent
// GOAWAY too_many_pings (ENHANCE_YOUR_CALM); gRPC's own policy would allow one ping
// per 5 minutes with a stream open and none without. Issue 14 item 4.
func TestKeepaliveEnforcement(t *testing.T) {
	fr := clientFramer(t, serveOptions(t, server.Limits{KeepaliveMinTime: time.Hour}))
	go func() {
		// The server allows two strikes; the fourth ping is surely over. Write
		// errors after the GOAWAY are expected.
		for i := range 4 {
			if fr.WritePing(false, [8]byte{byte(i)}) != nil {
				return
			}
		}
	}()
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("connection ended with %v before a GOAWAY", err)
		}
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			if ga.ErrCode != http2.ErrCodeEnhanceYourCalm || string(ga.DebugData()) != "too_many_pings" {
				t.Errorf("GOAWAY %v %q, want ENHANCE_YOUR_CALM too_many_pings", ga.ErrCode, ga.DebugData())
			}
			return
		}
	}
}

// TestHandshakeTimeout: a connection that never sends the HTTP/2 preface is closed by
// the server once HandshakeTimeout has passed, where gRPC's own default waits 120 s.
// The read deadline is a guard against a hung test, far above the limit and far below
// gRPC's default. Issue 14 item 4.
func TestHandshakeTimeout(t *testing.T) {
	conn := serveOptions(t, server.Limits{HandshakeTimeout: 50 * time.Millisecond})
	buf := make([]byte, 64)
	for {
		_, err := conn.Read(buf)
		if err == nil {
			continue // a SETTINGS frame, if any, before the close
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("the server kept a silent connection open for 60 s, want it closed after the 50 ms handshake timeout")
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			t.Logf("connection closed with %v", err) // a reset is a close too
		}
		return
	}
}

// TestMaxConcurrentStreams: the server's HTTP/2 settings announce the streams one
// connection may open, DefaultMaxConcurrentStreams when the limit is zero; a gRPC client
// above it waits for a stream to end instead of sending more (and being shed).
func TestMaxConcurrentStreams(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int
		want  uint32
	}{
		{"default", 0, server.DefaultMaxConcurrentStreams},
		{"set", 7, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := clientFramer(t, serveOptions(t, server.Limits{MaxConcurrentStreams: tc.limit}))
			for {
				f, err := fr.ReadFrame()
				if err != nil {
					t.Fatalf("connection ended with %v before the server's settings", err)
				}
				if s, ok := f.(*http2.SettingsFrame); ok && !s.IsAck() {
					got, ok := s.Value(http2.SettingMaxConcurrentStreams)
					if !ok || got != tc.want {
						t.Errorf("SETTINGS_MAX_CONCURRENT_STREAMS = %d (sent %v), want %d", got, ok, tc.want)
					}
					return
				}
			}
		})
	}
}
