package storage

import (
	"context"
	"fmt"
	"strings"
)

// schemeKind maps a URI scheme that Open accepts to the FileIO it selects.
func schemeKind(scheme string) (string, bool) {
	switch scheme {
	case "", "file":
		return "local", true
	case "s3", "s3a", "s3n":
		return "s3", true
	}
	return "", false
}

// SplitURI splits a warehouse URI into its scheme ("" for a plain path),
// bucket (S3 only) and path. The path is taken literally, without
// percent-decoding, as Java's Path(String) does.
//
//	/lake or lake          -> "", "", "/lake" or "lake"
//	file:///lake           -> "file", "", "/lake"
//	file:/lake             -> "file", "", "/lake"   (Hadoop's form)
//	file://localhost/lake  -> "file", "", "/lake"
//	s3://bucket/a/b        -> "s3", "bucket", "a/b" (also s3a://, s3n://)
//	s3://bucket            -> "s3", "bucket", ""
//
// Unknown schemes (hdfs://, oss://) wrap ErrUnsupportedScheme.
func SplitURI(uri string) (scheme, bucket, path string, err error) {
	i := strings.Index(uri, ":")
	if i <= 0 || strings.ContainsAny(uri[:i], "/\\") || !isScheme(uri[:i]) {
		// No scheme: a plain local path. A colon later in it ("a:b") is a
		// file name character.
		if uri == "" {
			return "", "", "", fmt.Errorf("storage uri: empty")
		}
		return "", "", uri, nil
	}
	scheme, rest := strings.ToLower(uri[:i]), uri[i+1:]
	kind, ok := schemeKind(scheme)
	if !ok {
		return "", "", "", fmt.Errorf("storage uri %q: %w %q (want a path, file://, s3:// or s3a://)", uri, ErrUnsupportedScheme, scheme)
	}
	switch kind {
	case "local":
		if after, ok := strings.CutPrefix(rest, "//"); ok {
			host, p, _ := strings.Cut(after, "/")
			if host != "" && host != "localhost" {
				return "", "", "", fmt.Errorf("storage uri %q: remote host %q in a file URI", uri, host)
			}
			rest = "/" + p
		}
		if !strings.HasPrefix(rest, "/") {
			return "", "", "", fmt.Errorf("storage uri %q: a file URI needs an absolute path", uri)
		}
		return scheme, "", rest, nil
	default: // s3
		after, ok := strings.CutPrefix(rest, "//")
		if !ok {
			return "", "", "", fmt.Errorf("storage uri %q: want %s://bucket/prefix", uri, scheme)
		}
		bucket, p, _ := strings.Cut(after, "/")
		if bucket == "" {
			return "", "", "", fmt.Errorf("storage uri %q: no bucket", uri)
		}
		return scheme, bucket, strings.Trim(p, "/"), nil
	}
}

// isScheme reports RFC 3986 scheme syntax, so that a Windows-like "C:" or a
// file named "a:b" is not mistaken for one (one letter is never a scheme).
func isScheme(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// Open returns the FileIO for a warehouse URI (see SplitURI): a plain path
// or file:// gives a Local (the directory is created if missing), s3://,
// s3a:// or s3n:// an S3 on that bucket and prefix configured by s3cfg,
// which is ignored otherwise.
func Open(ctx context.Context, uri string, s3cfg S3Config) (FileIO, error) {
	scheme, bucket, p, err := SplitURI(uri)
	if err != nil {
		return nil, err
	}
	if kind, _ := schemeKind(scheme); kind == "s3" {
		return NewS3(ctx, bucket, p, s3cfg)
	}
	return NewLocal(p)
}
