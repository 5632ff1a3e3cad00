package tally

import (
	"strconv"

	"github.com/indexima-exporter/indexima_exporter/internal/clip"
)

// The vocabularies of names a node's events add to its tally, each bounded
// per node (Limits.MaxNames). The value is the key of Dropped, saved in the
// state file.
const (
	VocabIndexes   = "index"     // hyperindexes (Tally.Indexes)
	VocabTables    = "table"     // loaded tables (Tally.Tables)
	VocabDownNodes = "down_node" // nodes reported down (Tally.NodeDown, NodeDownLast)
)

// MaxNameBytes bounds every name taken from an event's comment.
const MaxNameBytes = 128

// Name makes a comment a name of the tally (a table, an index, a down
// node): valid UTF-8, surrounding blanks trimmed, at most MaxNameBytes (cut
// on a rune boundary). The bound keeps a node's state small whatever a
// console writes in a comment; two comments that differ only past it name
// one thing.
func Name(comment string) string { return clip.Text(comment, MaxNameBytes) }

// DownNodeKey is the down-node key of a NODE_DOWN comment: the comment as
// a Name (the node's number, in the specification), "unknown" when empty.
// The engine's Options.DownNodeName names a node from it.
func DownNodeKey(comment string) string {
	if name := Name(comment); name != "" {
		return name
	}
	return "unknown"
}

// NodeNumber reads a down-node key as the number of the node reported
// down (a NODE_DOWN comment is one, spec section 6); ok is false for a key
// that is no number.
func NodeNumber(key string) (n int, ok bool) {
	n, err := strconv.Atoi(key)
	return n, err == nil
}
