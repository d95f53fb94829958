package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/pause"
)

// Defaults and limits of the S3 FileIO.
const (
	// DefaultPartSize is the multipart part size: files smaller than this
	// are written with one PutObject.
	DefaultPartSize = 8 << 20
	// MinPartSize is S3's minimum size of every part but the last.
	MinPartSize = 5 << 20
	// DefaultReadAhead is the first read-ahead window of an opened file;
	// sequential reads double it up to MaxReadAhead.
	DefaultReadAhead = 64 << 10
	// MaxReadAhead caps the read-ahead window; larger reads go straight
	// into the caller's buffer.
	MaxReadAhead = 8 << 20
	// maxKeyLen is S3's limit on the UTF-8 length of a key.
	maxKeyLen = 1024
)

// S3Config configures the S3 FileIO. The zero value talks to AWS with the
// SDK's default credential chain and region.
type S3Config struct {
	// Endpoint is the service URL, for example "http://127.0.0.1:7070";
	// empty means AWS.
	Endpoint string
	// Region; empty means the default chain's region, else "us-east-1".
	Region string
	// ForcePathStyle addresses buckets as <endpoint>/<bucket>/<key>, which
	// most S3-compatible servers need.
	ForcePathStyle bool
	// AccessKeyID, SecretAccessKey and SessionToken are static credentials;
	// an empty AccessKeyID means the SDK's default credential chain
	// (environment, shared files, web identity, instance role).
	AccessKeyID, SecretAccessKey, SessionToken string

	// HTTPClient replaces the SDK's HTTP client (tests inject transport
	// faults through its Transport); nil means the SDK's. A custom CA bundle
	// (AWS_CA_BUNDLE) is then the client's business.
	HTTPClient *http.Client
	// RequestTimeout bounds every S3 call, body transfer included; 0 means
	// only the caller's context bounds it.
	RequestTimeout time.Duration
	// RetryMaxAttempts is the SDK's attempt limit for idempotent calls; 0
	// means the SDK default (3). WriteExclusive never lets the SDK retry; it
	// resends itself, up to this many attempts, only when the earlier
	// request provably did not apply (see there).
	RetryMaxAttempts int
	// PartSize is the multipart part size: 0 means DefaultPartSize;
	// otherwise at least MinPartSize.
	PartSize int64
	// UploadConcurrency is how many parts one Writer uploads at once while
	// the next part fills; 0 means 2.
	UploadConcurrency int
	// ReadAhead is the first read-ahead window of an opened file; 0 means
	// DefaultReadAhead.
	ReadAhead int64
	// ListPageSize is MaxKeys of each ListObjectsV2 page; 0 means the
	// server's default (1000).
	ListPageSize int32
	// ChecksumWhenRequired turns off the SDK's default CRC32 request
	// checksums and response validation, for servers that reject them.
	ChecksumWhenRequired bool
}

// withDefaults validates c and fills in the defaults.
func (c S3Config) withDefaults() (S3Config, error) {
	if c.PartSize == 0 {
		c.PartSize = DefaultPartSize
	}
	if c.PartSize < MinPartSize {
		return c, fmt.Errorf("s3 config: part size %d is below S3's minimum of %d", c.PartSize, MinPartSize)
	}
	if c.UploadConcurrency <= 0 {
		c.UploadConcurrency = 2
	}
	if c.ReadAhead <= 0 {
		c.ReadAhead = DefaultReadAhead
	}
	if c.ReadAhead > MaxReadAhead {
		c.ReadAhead = MaxReadAhead
	}
	if c.ListPageSize < 0 {
		return c, fmt.Errorf("s3 config: negative list page size %d", c.ListPageSize)
	}
	if c.RetryMaxAttempts < 0 {
		return c, fmt.Errorf("s3 config: negative retry attempts %d", c.RetryMaxAttempts)
	}
	if c.AccessKeyID != "" && c.SecretAccessKey == "" {
		return c, errors.New("s3 config: access key id without a secret access key")
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("s3 config: endpoint %q is not an http:// or https:// URL", c.Endpoint)
		}
	}
	return c, nil
}

// NewS3Client builds the aws-sdk-go-v2 client that NewS3 uses, for callers
// (tests, tools) that need the raw API with the same settings.
func NewS3Client(ctx context.Context, cfg S3Config) (*s3.Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	var opts []func(*config.LoadOptions) error
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	if cfg.AccessKeyID != "" {
		opts = append(opts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)))
	}
	if cfg.RetryMaxAttempts > 0 {
		opts = append(opts, config.WithRetryMaxAttempts(cfg.RetryMaxAttempts))
	}
	if cfg.ChecksumWhenRequired {
		opts = append(opts,
			config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
			config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3 config: %w", err)
	}
	if awsCfg.Region == "" {
		awsCfg.Region = "us-east-1"
	}
	return s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.ForcePathStyle
		if cfg.HTTPClient != nil {
			// Set here, not at LoadDefaultConfig, which refuses a plain
			// *http.Client when AWS_CA_BUNDLE is set.
			o.HTTPClient = cfg.HTTPClient
		}
		// Ranged GETs and multipart objects carry no full-object checksum;
		// the SDK would log that on every read.
		o.DisableLogOutputChecksumValidationSkipped = true
	}), nil
}

// S3 is a FileIO on a bucket and key prefix of an S3-compatible store.
//
// Reads are ranged GETs pinned to the ETag seen when the file was opened,
// so a file replaced meanwhile fails instead of mixing versions. Writes
// are a single PutObject below PartSize and a streamed multipart upload
// above. WriteExclusive is a PutObject with If-None-Match: "*".
type S3 struct {
	client *s3.Client
	bucket string
	prefix string // no leading or trailing slash; "" = the bucket root
	cfg    S3Config
}

// NewS3 returns a FileIO rooted at s3://bucket/prefix. It does not contact
// the server; a missing bucket or bad credentials surface on first use.
func NewS3(ctx context.Context, bucket, prefix string, cfg S3Config) (*S3, error) {
	if bucket == "" || strings.ContainsAny(bucket, "/ ") {
		return nil, fmt.Errorf("s3 storage: invalid bucket name %q", bucket)
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		if err := validateRel(prefix); err != nil {
			return nil, fmt.Errorf("s3 storage s3://%s/%s: prefix: %w", bucket, prefix, err)
		}
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	client, err := NewS3Client(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &S3{client: client, bucket: bucket, prefix: prefix, cfg: cfg}, nil
}

// Client returns the underlying SDK client.
func (s *S3) Client() *s3.Client { return s.client }

// Bucket returns the bucket name.
func (s *S3) Bucket() string { return s.bucket }

// Prefix returns the key prefix of the root, without slashes ("" = the
// bucket root).
func (s *S3) Prefix() string { return s.prefix }

// String returns the root as an s3:// URI.
func (s *S3) String() string {
	if s.prefix == "" {
		return "s3://" + s.bucket
	}
	return "s3://" + s.bucket + "/" + s.prefix
}

func (s *S3) key(p string) string {
	if s.prefix == "" {
		return p
	}
	return s.prefix + "/" + p
}

func (s *S3) uri(p string) string {
	return "s3://" + s.bucket + "/" + s.key(p)
}

// check validates the path and the context before a call.
func (s *S3) check(ctx context.Context, op, p string) error {
	if err := ValidatePath(p); err != nil {
		return fmt.Errorf("%s %s: %w", op, s.uri(p), err)
	}
	if len(s.key(p)) > maxKeyLen {
		return fmt.Errorf("%s %s: %w: key longer than %d bytes", op, s.uri(p), ErrInvalidPath, maxKeyLen)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s %s: %w", op, s.uri(p), err)
	}
	return nil
}

// callCtx bounds one S3 call by RequestTimeout.
func (s *S3) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.cfg.RequestTimeout > 0 {
		return context.WithTimeout(ctx, s.cfg.RequestTimeout)
	}
	return context.WithCancel(ctx)
}

// fail names the operation and the object and maps a missing object to
// ErrNotExist, keeping the SDK error for errors.As.
func (s *S3) fail(op, p string, err error) error {
	if isNotFound(err) {
		return fmt.Errorf("%s %s: %w (%w)", op, s.uri(p), ErrNotExist, err)
	}
	return fmt.Errorf("%s %s: %w", op, s.uri(p), err)
}

// Open implements FileIO: a HEAD for the size and ETag; reads are ranged
// GETs with read-ahead (see s3File). ctx governs the reads of the File too.
func (s *S3) Open(ctx context.Context, p string) (File, error) {
	if err := s.check(ctx, "open", p); err != nil {
		return nil, err
	}
	cctx, cancel := s.callCtx(ctx)
	defer cancel()
	out, err := s.client.HeadObject(cctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(p))})
	if err != nil {
		return nil, s.fail("open", p, err)
	}
	return newS3File(ctx, s, p, aws.ToInt64(out.ContentLength), out.ETag), nil
}

// ReadFile implements FileIO with one GET.
func (s *S3) ReadFile(ctx context.Context, p string) ([]byte, error) {
	if err := s.check(ctx, "read", p); err != nil {
		return nil, err
	}
	cctx, cancel := s.callCtx(ctx)
	defer cancel()
	out, err := s.client.GetObject(cctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(p))})
	if err != nil {
		return nil, s.fail("read", p, err)
	}
	defer out.Body.Close()
	var buf bytes.Buffer
	if n := aws.ToInt64(out.ContentLength); n > 0 {
		buf.Grow(int(n))
	}
	if _, err := buf.ReadFrom(out.Body); err != nil {
		return nil, s.fail("read", p, err)
	}
	if n := out.ContentLength; n != nil && int64(buf.Len()) != *n {
		return nil, fmt.Errorf("read %s: got %d bytes, Content-Length %d: %w", s.uri(p), buf.Len(), *n, io.ErrUnexpectedEOF)
	}
	return buf.Bytes(), nil
}

// Create implements FileIO (see s3Writer).
func (s *S3) Create(ctx context.Context, p string) (Writer, error) {
	if err := s.check(ctx, "create", p); err != nil {
		return nil, err
	}
	return newS3Writer(ctx, s, p), nil
}

// WriteFile implements FileIO with one PutObject.
func (s *S3) WriteFile(ctx context.Context, p string, data []byte) error {
	if err := s.check(ctx, "write", p); err != nil {
		return err
	}
	if err := s.put(ctx, p, data); err != nil {
		return s.fail("write", p, err)
	}
	return nil
}

func (s *S3) put(ctx context.Context, p string, data []byte, opts ...func(*s3.Options)) error {
	cctx, cancel := s.callCtx(ctx)
	defer cancel()
	_, err := s.client.PutObject(cctx, &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           aws.String(s.key(p)),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}, opts...)
	return err
}

// WriteExclusive implements FileIO with a PutObject carrying
// If-None-Match: "*".
//
// The SDK never retries this request: if attempt 1 lands server-side but
// its answer is lost, a retried attempt 2 gets 412 and would report
// ErrExist for a file this very call created. So every request is made
// once and its outcome mapped precisely:
//   - 2xx: created.
//   - 412 PreconditionFailed: ErrExist.
//   - 409 ConditionalRequestConflict (a concurrent conditional write was in
//     progress; ours was not applied): sent again after a back-off, since
//     reporting ErrExist could be wrong if the other write then fails.
//   - other 3xx/4xx, or a failure before the request reached the network
//     (connection refused, credentials, a context already done): nothing
//     was written; a refused connection is retried.
//   - 5xx, time-outs, dropped connections, a success status whose body
//     could not be read: ErrAmbiguous.
func (s *S3) WriteExclusive(ctx context.Context, p string, data []byte) error {
	if err := s.check(ctx, "create exclusively", p); err != nil {
		return err
	}
	attempts := s.cfg.RetryMaxAttempts
	if attempts <= 0 {
		attempts = 3
	}
	for attempt := 1; ; attempt++ {
		tracker := &sendTracker{}
		err := s.putExclusive(ctx, p, data, tracker)
		out := classifyExclusive(err, tracker.sent.Load())
		switch out {
		case exclusiveCreated:
			return nil
		case exclusiveExists:
			return fmt.Errorf("create exclusively %s: %w (%w)", s.uri(p), ErrExist, err)
		case exclusiveAmbiguous:
			return fmt.Errorf("create exclusively %s: %w: %w", s.uri(p), ErrAmbiguous, err)
		case exclusiveConflict, exclusiveNotSent:
			if attempt < attempts && (out == exclusiveConflict || isDialError(err)) {
				if werr := backoff(ctx, attempt); werr == nil {
					continue
				}
			}
			if out == exclusiveConflict {
				return fmt.Errorf("create exclusively %s: a concurrent conditional write kept conflicting, nothing written: %w", s.uri(p), err)
			}
			return fmt.Errorf("create exclusively %s: nothing written: %w", s.uri(p), err)
		default: // exclusiveFailed
			return s.fail("create exclusively", p, err)
		}
	}
}

func (s *S3) putExclusive(ctx context.Context, p string, data []byte, tracker *sendTracker) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cctx, cancel := s.callCtx(ctx)
	defer cancel()
	_, err := s.client.PutObject(cctx, &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           aws.String(s.key(p)),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		IfNoneMatch:   aws.String("*"),
	}, func(o *s3.Options) {
		o.Retryer = retry.AddWithMaxAttempts(o.Retryer, 1)
		tracker.inner = o.HTTPClient
		o.HTTPClient = tracker
	})
	return err
}

// sendTracker records whether a request reached the HTTP client, which
// separates "never sent" (signing, credentials) from "sent, outcome
// unknown".
type sendTracker struct {
	inner s3.HTTPClient
	sent  atomic.Bool
}

func (t *sendTracker) Do(r *http.Request) (*http.Response, error) {
	t.sent.Store(true)
	return t.inner.Do(r)
}

// backoff waits before attempt+1: 50 ms doubling, with jitter, at most 2 s.
func backoff(ctx context.Context, attempt int) error {
	d := min(50*time.Millisecond<<min(attempt-1, 6), 2*time.Second)
	d = d/2 + rand.N(d/2+1)
	return pause.For(ctx, d)
}

// Stat implements FileIO with a HEAD. A key prefix is not a file on S3
// and gives ErrNotExist.
func (s *S3) Stat(ctx context.Context, p string) (FileInfo, error) {
	if err := s.check(ctx, "stat", p); err != nil {
		return FileInfo{}, err
	}
	cctx, cancel := s.callCtx(ctx)
	defer cancel()
	out, err := s.client.HeadObject(cctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(p))})
	if err != nil {
		return FileInfo{}, s.fail("stat", p, err)
	}
	return FileInfo{Path: p, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified)}, nil
}

// List implements FileIO with paginated ListObjectsV2; non-recursive
// listings use the delimiter "/" and report common prefixes as
// directories. Keys this FileIO could not address (ending in "/", empty
// elements) are skipped.
func (s *S3) List(ctx context.Context, dir string, recursive bool) ([]FileInfo, error) {
	d, err := validateDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", s.uri(dir), err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list %s: %w", s.uri(d), err)
	}
	root := ""
	if s.prefix != "" {
		root = s.prefix + "/"
	}
	listPrefix := root
	if d != "" {
		listPrefix = root + d + "/"
	}
	in := &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(listPrefix)}
	if !recursive {
		in.Delimiter = aws.String("/")
	}
	if s.cfg.ListPageSize > 0 {
		in.MaxKeys = aws.Int32(s.cfg.ListPageSize)
	}
	var out []FileInfo
	pages := s3.NewListObjectsV2Paginator(s.client, in)
	for pages.HasMorePages() {
		cctx, cancel := s.callCtx(ctx)
		page, err := pages.NextPage(cctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", s.uri(d), err)
		}
		for _, o := range page.Contents {
			k := aws.ToString(o.Key)
			if !strings.HasPrefix(k, listPrefix) {
				continue
			}
			rel := k[len(root):]
			if ValidatePath(rel) != nil {
				continue
			}
			out = append(out, FileInfo{Path: rel, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)})
		}
		for _, cp := range page.CommonPrefixes {
			k := strings.TrimSuffix(aws.ToString(cp.Prefix), "/")
			if !strings.HasPrefix(k, listPrefix) {
				continue
			}
			rel := k[len(root):]
			if ValidatePath(rel) != nil {
				continue
			}
			out = append(out, FileInfo{Path: rel, IsDir: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Delete implements FileIO with DeleteObject.
func (s *S3) Delete(ctx context.Context, p string) error {
	if err := s.check(ctx, "delete", p); err != nil {
		return err
	}
	cctx, cancel := s.callCtx(ctx)
	defer cancel()
	_, err := s.client.DeleteObject(cctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: aws.String(s.key(p))})
	if err != nil && !isNotFound(err) {
		return s.fail("delete", p, err)
	}
	return nil
}
