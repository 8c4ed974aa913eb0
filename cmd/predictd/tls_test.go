package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/sqpredict/sqpredict/client"
	pb "github.com/sqpredict/sqpredict/proto/sqpredict/v1"
)

// testCert is a certificate made in a test, its key, and its PEM files.
type testCert struct {
	cert              *x509.Certificate
	key               *ecdsa.PrivateKey
	certFile, keyFile string
}

// issue makes a certificate for tmpl signed by parent (self-signed when parent is nil)
// and writes it and its key as name.pem and name-key.pem into dir.
func issue(t *testing.T, dir, name string, tmpl *x509.Certificate, parent *testCert) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.Subject = pkix.Name{CommonName: name}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c := &testCert{key: key, certFile: filepath.Join(dir, name+".pem"), keyFile: filepath.Join(dir, name+"-key.pem")}
	if err := os.WriteFile(c.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	if c.cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	return c
}

// serverTemplate is a server certificate for 127.0.0.1.
func serverTemplate(serial int64) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
}

// caTemplate is a CA certificate.
func caTemplate(serial int64) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
}

// clientTemplate is a client certificate.
func clientTemplate(serial int64) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	c := issue(t, dir, "cert", serverTemplate(1), nil)
	pool = x509.NewCertPool()
	pool.AddCert(c.cert)
	return c.certFile, c.keyFile, pool
}

// TestRunTLSAndPredictionLog serves over TLS with a prediction log: a request is
// answered over the TLS connection and its prediction is in the log after shutdown.
func TestRunTLSAndPredictionLog(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	logDir := filepath.Join(dir, "predictions")
	grpcAddr, _, stop := startRun(t, "-tls-cert", certFile, "-tls-key", keyFile, "-prediction-log", logDir)
	creds := credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	c, err := client.Dial(grpcAddr, client.Config{DialOptions: []grpc.DialOption{grpc.WithTransportCredentials(creds)}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := c.PredictSuccess(ctx, &pb.PredictSuccessRequest{Changes: []*pb.SuccessQuery{{Change: &pb.Change{ChangeId: "C42", Author: "dev0001"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(logDir, "predictions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	line := string(b)
	for _, want := range []string{`"kind":"success"`, `"change_id":"C42"`, `"model_version":"` + resp.GetPredictions()[0].GetModel().GetVersion() + `"`, `"served":true`} {
		if !strings.Contains(line, want) {
			t.Errorf("prediction log %q lacks %s", line, want)
		}
	}
}

// TestRunMutualTLS: with --tls-client-ca, a client with a certificate of that CA is
// served; one without a certificate, or with one of another CA, is refused. Every
// certificate is made here. Issue 14 item 5.
func TestRunMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := issue(t, dir, "ca", caTemplate(1), nil)
	srv := issue(t, dir, "server", serverTemplate(2), ca)
	good := issue(t, dir, "client", clientTemplate(3), ca)
	otherCA := issue(t, dir, "other-ca", caTemplate(4), nil)
	foreign := issue(t, dir, "foreign", clientTemplate(5), otherCA)
	grpcAddr, _, stop := startRun(t, "-tls-cert", srv.certFile, "-tls-key", srv.keyFile, "-tls-client-ca", ca.certFile)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	for _, tc := range []struct {
		name       string
		cert, key  string
		wantServed bool
	}{
		{"certificate of the CA", good.certFile, good.keyFile, true},
		{"no certificate", "", "", false},
		{"certificate of another CA", foreign.certFile, foreign.keyFile, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			creds, err := client.TLSCredentials(ca.certFile, tc.cert, tc.key)
			if err != nil {
				t.Fatal(err)
			}
			c, err := client.Dial(grpcAddr, client.Config{MaxAttempts: 1, DialOptions: []grpc.DialOption{grpc.WithTransportCredentials(creds)}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err = c.GetModelInfo(ctx, &pb.GetModelInfoRequest{})
			if served := err == nil; served != tc.wantServed {
				t.Errorf("GetModelInfo = %v, want served %v", err, tc.wantServed)
			}
		})
	}
}
