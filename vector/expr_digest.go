package vector

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash/crc32"
)

// digestFunctions are Spark's hash digests of a binary value (a string is
// cast to its UTF-8 bytes): md5, sha1 (also sha) and sha2 as lower-case
// hexadecimal text, crc32 as a bigint. They are merged into the registry at
// package initialisation.
var digestFunctions = map[string]funcSpec{
	"md5":   {1, 1, rowsFunc("md5", []rowKind{rowBin}, String, rowKernels{str: md5Kernel})},
	"sha1":  {1, 1, rowsFunc("sha1", []rowKind{rowBin}, String, rowKernels{str: sha1Kernel})},
	"sha":   {1, 1, rowsFunc("sha", []rowKind{rowBin}, String, rowKernels{str: sha1Kernel})},
	"sha2":  {2, 2, rowsFunc("sha2", []rowKind{rowBin, rowInt}, String, rowKernels{str: sha2Kernel})},
	"crc32": {1, 1, rowsFunc("crc32", []rowKind{rowBin}, Int64, rowKernels{num: crc32Kernel})},
}

func init() {
	for name, spec := range digestFunctions {
		functions[name] = spec
	}
}

func md5Kernel(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	sum := md5.Sum(a[0].str(i))
	return hex.AppendEncode(dst, sum[:]), true, nil
}

func sha1Kernel(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	sum := sha1.Sum(a[0].str(i))
	return hex.AppendEncode(dst, sum[:]), true, nil
}

// sha2Kernel is sha2(bin, bits): SHA-224, SHA-256 (bits 256 or 0), SHA-384
// or SHA-512; any other bit length is NULL, as in Spark.
func sha2Kernel(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	b := a[0].str(i)
	switch a[1].int(i) {
	case 224:
		sum := sha256.Sum224(b)
		return hex.AppendEncode(dst, sum[:]), true, nil
	case 0, 256:
		sum := sha256.Sum256(b)
		return hex.AppendEncode(dst, sum[:]), true, nil
	case 384:
		sum := sha512.Sum384(b)
		return hex.AppendEncode(dst, sum[:]), true, nil
	case 512:
		sum := sha512.Sum512(b)
		return hex.AppendEncode(dst, sum[:]), true, nil
	}
	return dst, false, nil
}

// crc32Kernel is the IEEE CRC-32 (java.util.zip.CRC32) as a non-negative
// bigint.
func crc32Kernel(a []rowArg, i int) (int64, bool, error) {
	return int64(crc32.ChecksumIEEE(a[0].str(i))), true, nil
}
