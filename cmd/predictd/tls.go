package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// tlsConfig returns the server TLS configuration of --tls-cert and --tls-key and, when
// clientCA is set (--tls-client-ca), requiring a client certificate that chains to one
// of the CA certificates in that PEM file: mutual TLS, the supported way to restrict who
// may call predictd.
func tlsConfig(certFile, keyFile, clientCA string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("predictd: --tls-cert %s, --tls-key %s: %w", certFile, keyFile, err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCA == "" {
		return tc, nil
	}
	pem, err := os.ReadFile(clientCA)
	if err != nil {
		return nil, fmt.Errorf("predictd: --tls-client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("predictd: --tls-client-ca %s: no PEM certificate in the file", clientCA)
	}
	tc.ClientCAs, tc.ClientAuth = pool, tls.RequireAndVerifyClientCert
	return tc, nil
}
