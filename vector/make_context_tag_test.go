//go:build !arrowstream_nolinkname

package vector

// nolinknameTag reports the arrowstream_nolinkname build tag.
const nolinknameTag = false
