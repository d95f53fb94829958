package aggregate

import (
	"bytes"
	"testing"
)

// FuzzDecodeRoaring feeds arbitrary bytes to the rbm32 decoder: it must
// fail cleanly or decode chunks that survive a serialize/deserialize round
// trip unchanged.
func FuzzDecodeRoaring(f *testing.F) {
	f.Add(rbm(0, "", []int{1, 5, 9}))
	f.Add(rbm(0, "r", span(1, 5), 3, "a", []int{7}))
	f.Add(rbm(0, "", span(0, 5000), 1, "", []int{1}, 2, "", []int{2}, 4, "", []int{4}))
	f.Add([]byte{0x3a, 0x30, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		chunks, err := decodeRoaring(data)
		if err != nil {
			return
		}
		enc := encodeRoaring(chunks)
		again, err := decodeRoaring(enc)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !bytes.Equal(encodeRoaring(again), enc) {
			t.Fatal("serialization is not stable")
		}
		var want []*rbChunk
		for _, c := range chunks {
			if c.card() > 0 {
				want = append(want, c)
			}
		}
		if len(again) != len(want) {
			t.Fatalf("%d chunks, want %d", len(again), len(want))
		}
		for i := range want {
			if again[i].key != want[i].key || again[i].bits != want[i].bits {
				t.Fatalf("chunk %d differs", i)
			}
		}
	})
}

// FuzzDecodeTheta feeds arbitrary bytes to the theta_sketch union: it must
// fail cleanly or return a sketch that decodes again.
func FuzzDecodeTheta(f *testing.F) {
	f.Add(encodeTheta(false, thetaMaxTheta, []int64{1, 2, 3}))
	f.Add(encodeTheta(false, 1<<40, []int64{5}))
	f.Add(encodeTheta(true, thetaMaxTheta, nil))
	fn := thetaFunc{}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := fn.Agg(encodeTheta(false, thetaMaxTheta, []int64{7, 9}), data)
		if err != nil {
			return
		}
		if _, err := decodeTheta(out.([]byte)); err != nil {
			t.Fatalf("result does not decode: %v", err)
		}
	})
}
