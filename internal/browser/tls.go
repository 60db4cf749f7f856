package browser

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"

	"github.com/dtb-cli/dtb/internal/output"
)

// TLSWithCA is the TLS configuration of a --cdp over TLS with a private CA:
// the system's roots plus the certificates of the PEM file caFile. There is
// no switch that turns verification off.
func TLSWithCA(caFile string) (*tls.Config, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, output.Wrap("usage", err, "--cdp-ca: cannot read "+caFile)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, output.Usage("--cdp-ca: %s holds no PEM certificate", caFile)
	}
	return &tls.Config{RootCAs: pool}, nil
}

type tlsKey struct{}

// WithTLS makes the discovery requests under ctx verify TLS with conf (nil:
// the system's roots).
func WithTLS(ctx context.Context, conf *tls.Config) context.Context {
	if conf == nil {
		return ctx
	}
	return context.WithValue(ctx, tlsKey{}, conf)
}

func tlsOf(ctx context.Context) *tls.Config {
	conf, _ := ctx.Value(tlsKey{}).(*tls.Config)
	return conf
}
