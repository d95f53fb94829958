package manifest

import "fmt"

// MergeEntries merges entries in order as Java's FileEntry.mergeEntries does
// (apache/paimon: paimon-core/src/main/java/org/apache/paimon/manifest/FileEntry.java):
// feed it the entries of the base manifest list, then of the delta list, each
// manifest's entries in file order.
//
//   - an ADD of an identifier (Entry.Identifier) that is already present
//     fails with an error wrapping ErrDuplicateFile;
//   - a DELETE removes a present entry with the same identifier;
//   - a DELETE with nothing to cancel is kept, since its ADD lives in
//     manifests not passed in.
//
// The result keeps first-insertion order (Java's LinkedHashMap); after
// merging a whole snapshot it holds only ADD entries, the live files.
func MergeEntries(entries []Entry) ([]Entry, error) {
	type slot struct {
		e    Entry
		live bool
	}
	order := make([]slot, 0, len(entries))
	index := make(map[string]int, len(entries))
	for i := range entries {
		e := &entries[i]
		id := e.Identifier()
		switch e.Kind {
		case FileKindAdd:
			if _, ok := index[id]; ok {
				return nil, fmt.Errorf("merge manifest entries: %w: trying to add file %s (bucket %d, level %d) which is already in the map",
					ErrDuplicateFile, e.File.FileName, e.Bucket, e.File.Level)
			}
			index[id] = len(order)
			order = append(order, slot{e: *e, live: true})
		case FileKindDelete:
			if j, ok := index[id]; ok {
				order[j].live = false
				delete(index, id)
			} else {
				index[id] = len(order)
				order = append(order, slot{e: *e, live: true})
			}
		default:
			return nil, fmt.Errorf("merge manifest entries: %w: unknown kind %d of %s", ErrCorrupt, e.Kind, e.File.FileName)
		}
	}
	out := make([]Entry, 0, len(index))
	for _, s := range order {
		if s.live {
			out = append(out, s.e)
		}
	}
	return out, nil
}
