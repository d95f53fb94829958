package storage

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// abortTimeout bounds the clean-up of a multipart upload, which runs even
// when the writer's context is done.
const abortTimeout = 30 * time.Second

// minPartBuffer is the first allocation of a part buffer, which then
// doubles up to PartSize as bytes arrive.
const minPartBuffer = 64 << 10

// s3Writer streams a file to S3. Bytes collect in a buffer of up to
// PartSize, grown as they arrive so that many small open files (one per
// partition being written) hold about their size, not a part each; a file
// that never fills one is written with a single PutObject on Close.
// Otherwise the first full buffer starts a multipart upload and every full
// buffer is uploaded as a part in the background (UploadConcurrency at
// once) while the next one fills; Close uploads the rest and completes the
// upload, which makes the object appear at once. On any failure the upload
// is aborted so no parts are left behind.
type s3Writer struct {
	ctx     context.Context
	s       *S3
	path    string
	key     string
	buf     []byte
	written int64
	state   writerState

	uploadID *string
	nextPart int32
	sem      chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex // guards parts and err, written by part uploads
	parts    []types.CompletedPart
	err      error
	aborted  bool // the multipart upload was aborted
}

func newS3Writer(ctx context.Context, s *S3, p string) *s3Writer {
	return &s3Writer{ctx: ctx, s: s, path: p, key: s.key(p), sem: make(chan struct{}, s.cfg.UploadConcurrency)}
}

func (w *s3Writer) Written() int64 { return w.written }

func (w *s3Writer) asyncErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *s3Writer) Write(b []byte) (int, error) {
	if w.state != writerOpen {
		return 0, w.s.fail("write", w.path, ErrClosed)
	}
	if err := w.asyncErr(); err != nil {
		return 0, w.s.fail("write", w.path, err)
	}
	n := 0
	for len(b) > 0 {
		room := int(w.s.cfg.PartSize) - len(w.buf)
		c := min(room, len(b))
		w.appendBuf(b[:c])
		b = b[c:]
		n += c
		w.written += int64(c)
		if len(w.buf) == int(w.s.cfg.PartSize) {
			if err := w.flushPart(); err != nil {
				return n, w.s.fail("write", w.path, err)
			}
		}
	}
	return n, nil
}

// appendBuf appends p, which fits in the part, to the buffer: capacity
// doubles from minPartBuffer and never exceeds PartSize, unlike append's
// growth, which could overshoot the part by a quarter.
func (w *s3Writer) appendBuf(p []byte) {
	if need := len(w.buf) + len(p); need > cap(w.buf) {
		c := min(max(need, 2*cap(w.buf), minPartBuffer), int(w.s.cfg.PartSize))
		buf := make([]byte, len(w.buf), max(c, need))
		copy(buf, w.buf)
		w.buf = buf
	}
	w.buf = append(w.buf, p...)
}

// flushPart hands the full buffer to a background part upload, starting the
// multipart upload first if needed.
func (w *s3Writer) flushPart() error {
	if w.uploadID == nil {
		ctx, cancel := w.s.callCtx(w.ctx)
		in := &s3.CreateMultipartUploadInput{Bucket: &w.s.bucket, Key: &w.key}
		if !w.s.cfg.ChecksumWhenRequired {
			// As the SDK's own upload manager does: CRC32 per part.
			in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
		}
		out, err := w.s.client.CreateMultipartUpload(ctx, in)
		cancel()
		if err != nil {
			return fmt.Errorf("start multipart upload: %w", err)
		}
		w.uploadID = out.UploadId
	}
	select {
	case w.sem <- struct{}{}:
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
	if w.nextPart >= 10000 {
		<-w.sem
		return fmt.Errorf("file exceeds S3's 10000 parts of %d bytes", w.s.cfg.PartSize)
	}
	w.nextPart++
	num, data := w.nextPart, w.buf
	w.buf = nil // the next part grows again: the file may end soon
	w.wg.Add(1)
	go w.uploadPart(num, data)
	return nil
}

func (w *s3Writer) uploadPart(num int32, data []byte) {
	defer w.wg.Done()
	defer func() { <-w.sem }()
	ctx, cancel := w.s.callCtx(w.ctx)
	defer cancel()
	in := &s3.UploadPartInput{
		Bucket:        &w.s.bucket,
		Key:           &w.key,
		UploadId:      w.uploadID,
		PartNumber:    aws.Int32(num),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
	if !w.s.cfg.ChecksumWhenRequired {
		in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
	}
	out, err := w.s.client.UploadPart(ctx, in)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if w.err == nil {
			w.err = fmt.Errorf("upload part %d: %w", num, err)
		}
		return
	}
	w.parts = append(w.parts, types.CompletedPart{PartNumber: aws.Int32(num), ETag: out.ETag, ChecksumCRC32: out.ChecksumCRC32})
}

func (w *s3Writer) Close() error {
	if w.state != writerOpen {
		return w.s.fail("close", w.path, ErrClosed)
	}
	w.state = writerFailed
	if err := w.ctx.Err(); err != nil {
		w.abortUpload()
		return w.s.fail("close", w.path, err)
	}
	if w.uploadID == nil {
		if err := w.s.put(w.ctx, w.path, w.buf); err != nil {
			return w.s.fail("close", w.path, err)
		}
		w.buf = nil
		w.state = writerClosed
		return nil
	}
	if len(w.buf) > 0 {
		if err := w.flushPart(); err != nil {
			w.abortUpload()
			return w.s.fail("close", w.path, err)
		}
	}
	w.wg.Wait()
	if err := w.asyncErr(); err != nil {
		w.abortUpload()
		return w.s.fail("close", w.path, err)
	}
	if err := w.complete(); err != nil {
		w.abortUpload()
		return w.s.fail("close", w.path, err)
	}
	w.buf = nil
	w.state = writerClosed
	return nil
}

// complete completes the multipart upload. If the SDK retried a complete
// whose first attempt succeeded, the retry gets NoSuchUpload; the object
// is then ours if its ETag is the multipart ETag of our parts.
func (w *s3Writer) complete() error {
	sort.Slice(w.parts, func(i, j int) bool { return *w.parts[i].PartNumber < *w.parts[j].PartNumber })
	ctx, cancel := w.s.callCtx(w.ctx)
	defer cancel()
	_, err := w.s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket:          &w.s.bucket,
		Key:             &w.key,
		UploadId:        w.uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts},
	})
	if err == nil {
		return nil
	}
	if apiCode(err) == "NoSuchUpload" {
		if want, ok := multipartETag(w.parts); ok {
			head, herr := w.s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &w.s.bucket, Key: &w.key})
			if herr == nil && strings.Trim(aws.ToString(head.ETag), `"`) == want {
				w.aborted = true // nothing left to abort
				return nil
			}
		}
	}
	return fmt.Errorf("complete multipart upload: %w", err)
}

// multipartETag is the ETag S3 gives a completed multipart object: the MD5
// of the parts' binary MD5s, a dash and the part count.
func multipartETag(parts []types.CompletedPart) (string, bool) {
	h := md5.New()
	for _, p := range parts {
		b, err := hex.DecodeString(strings.Trim(aws.ToString(p.ETag), `"`))
		if err != nil || len(b) != md5.Size {
			return "", false
		}
		h.Write(b)
	}
	return fmt.Sprintf("%s-%d", hex.EncodeToString(h.Sum(nil)), len(parts)), true
}

// abortUpload waits for part uploads and aborts the multipart upload, with
// a context that outlives the writer's so clean-up happens after a cancel.
func (w *s3Writer) abortUpload() error {
	w.wg.Wait()
	if w.uploadID == nil || w.aborted {
		return nil
	}
	w.aborted = true
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), abortTimeout)
	defer cancel()
	_, err := w.s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &w.s.bucket, Key: &w.key, UploadId: w.uploadID})
	if err != nil && apiCode(err) != "NoSuchUpload" {
		return fmt.Errorf("abort multipart upload: %w", err)
	}
	return nil
}

func (w *s3Writer) Abort() error {
	if w.state == writerClosed || w.state == writerAborted {
		return nil
	}
	w.state = writerAborted
	w.buf = nil
	if err := w.abortUpload(); err != nil {
		return w.s.fail("abort", w.path, err)
	}
	return nil
}
