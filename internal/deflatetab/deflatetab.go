// Package deflatetab holds deflate's length and distance tables (RFC 1951,
// 3.2.5), shared by the decoder of small answers (internal/smallgzip) and
// the fixed-code encoder of exposition pieces (internal/gzchunk).
package deflatetab

var (
	// LengthBase and LengthExtra are the first match length of symbols 257
	// to 285 and their extra bits.
	LengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	LengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	// DistBase and DistExtra are the first distance of symbols 0 to 29 and
	// their extra bits.
	DistBase  = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	DistExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)
