// Package aggregate is Paimon's aggregation merge engine
// (merge-engine = aggregation) over lakecore's Go values: one aggregate
// function per field, folding the rows of one primary key in merge order.
//
// It mirrors apache/paimon release-1.4.2:
// paimon-core/src/main/java/org/apache/paimon/mergetree/compact/aggregate/
// (AggregateMergeFunction.java, FieldAggregator.java, the Field*Agg classes
// and factory/Field*AggFactory.java) and the per-field options of
// paimon-api/.../CoreOptions.java (paimon-pk.md §5.4).
//
// Functions ([New]): sum, product, max, min, last_value,
// last_non_null_value, first_value, first_non_null_value (and its legacy
// name first_not_null_value), listagg, bool_and, bool_or, collect,
// merge_map, merge_map_with_keytime, nested_update, nested_partial_update,
// rbm32, theta_sketch and primary-key. Java 1.4.2 has no count function.
//
// Refused with [ErrUnsupportedFunction] (lakecore cannot reproduce Java's
// bytes or order, so it reports instead of returning a different value):
//   - rbm64: Roaring64Bitmap's own (ART) serialization is not implemented;
//   - hll_sketch: the DataSketches HLL union and its HLL_4 format are not
//     implemented (theta_sketch is, for serialization version 3);
//   - collect with distinct over BINARY/VARBINARY elements, and merge_map
//     or merge_map_with_keytime with BINARY/VARBINARY keys: Java hashes
//     byte[] by identity, so equal byte strings are not merged and the
//     order is arbitrary;
//   - merge_map and merge_map_with_keytime with ARRAY/MAP/MULTISET/ROW
//     keys: Java's hash of the reader's nested objects is not reproduced;
//   - at run time, collect's retraction of nested elements without
//     distinct (Java compares the reader's objects with Object.equals),
//     and any Java HashMap bin that Java would turn into a red-black tree
//     (8 or more keys colliding in one bin of a table of at least 64
//     bins), whose iteration order is not reproduced.
//
// Java builds the results of collect (distinct), merge_map,
// merge_map_with_keytime, nested_update (with nested-key) and
// nested_partial_update in a java.util.HashMap or HashSet, so their order
// is the HashMap's iteration order; this package reproduces it (Java's
// hashCode of each value, HashMap's bin layout and resizing), so arrays and
// maps come out in Java's order.
//
// TestJavaOracle replays each function on cases whose results Java Paimon
// 1.4.2 itself computed (testdata/oracle/AggOracle.java; the results are
// in testdata/java_oracle.json).
//
// Values are those of lakecore/types (nil is NULL); the functions never
// modify their inputs, but a result may share slices with them.
// A Func or RowAggregator is not safe for concurrent use.
package aggregate
