package client

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"google.golang.org/grpc/credentials"
)

// TLSCredentials returns transport credentials for a predictd served over TLS: the
// server's certificate must chain to a CA of caFile (PEM; "" means the system roots),
// and with certFile and keyFile (PEM, both or neither) the client presents that
// certificate, as a predictd started with --tls-client-ca requires. Pass the result as
// grpc.WithTransportCredentials in Config.DialOptions.
func TLSCredentials(caFile, certFile, keyFile string) (credentials.TransportCredentials, error) {
	if (certFile == "") != (keyFile == "") {
		return nil, fmt.Errorf("%w: client certificate %q and key %q go together", ErrConfig, certFile, keyFile)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("client: CA file: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client: CA file %s: no PEM certificate in the file", caFile)
		}
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("client: certificate %s, key %s: %w", certFile, keyFile, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(tc), nil
}
