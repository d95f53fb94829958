// Package mergetree holds the log-structured merge tree of a primary-key
// table's bucket: the sorted runs its files form (IntervalPartition), the
// k-way merge of runs in Java's record order, and the merge engines that
// fold the records of one key into its current value (deduplicate,
// partial-update, aggregation, first-row).
//
// Everything here mirrors apache/paimon paimon-core/.../mergetree/ at
// release-1.4.2 (paimon-pk.md §4, §5): IntervalPartition.java,
// SortMergeReaderWithMinHeap.java, ReducerMergeFunctionWrapper.java,
// DropDeleteReader.java and the MergeFunction implementations in
// mergetree/compact/. Records are KeyValues whose values are lakecore's Go
// values (package types); the key is a set of columns of the value, as
// Java 1.x readers derive it (FormatReaderMapping.trimKeyFields).
package mergetree
