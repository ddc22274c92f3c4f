// Package keyhash hashes the keys of the repository's tables (the
// versioned table of internal/mvcc, the tries of watchable's views and
// their indexes): strings and integers with a hash of its own, every other
// comparable type with hash/maphash.
//
// Its own hash is there for speed and for the purego build tag. A key of
// up to 16 bytes is read in at most two words and mixed by two 128-bit
// multiplications with random constants, where maphash.String takes three
// calls to reach the runtime's hash. And with purego, maphash.Comparable
// hashes through reflection and allocates on every call: a table of int
// keys would allocate on every write.
//
// Hashes are seeded afresh in each process, as maphash's are, and are the
// same for equal keys within one process.
package keyhash

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"unsafe"
)

// hashKeys are the random constants short keys are mixed with.
var hashKeys = [3]uint64{rand.Uint64() | 1, rand.Uint64(), rand.Uint64() | 1}

// seed is maphash's seed for the keys this package does not hash itself:
// strings over 16 bytes, and keys of types other than strings and
// integers (Comparable).
var seed = maphash.MakeSeed()

// String is the hash of a string key: as good as maphash.String's for a
// hash table, and faster for the short keys most maps have. A key of up to
// 16 bytes is read in at most two words, which hold every byte of it;
// longer keys go to maphash.
func String(s string) uint64 {
	n := len(s)
	if n > 16 {
		return maphash.String(seed, s)
	}
	b := unsafe.Slice(unsafe.StringData(s), n)
	var x, y uint64
	switch {
	case n >= 8: // the first and the last eight bytes, overlapping below 16
		x = binary.LittleEndian.Uint64(b)
		y = binary.LittleEndian.Uint64(b[n-8:])
	case n >= 4: // the first and the last four
		x = uint64(binary.LittleEndian.Uint32(b))
		y = uint64(binary.LittleEndian.Uint32(b[n-4:]))
	case n > 0: // one, two or three bytes: all of them
		x = uint64(b[0])<<16 | uint64(b[n/2])<<8 | uint64(b[n-1])
	}
	return mix(x, y, uint64(n))
}

// Uint64 is the hash of an integer key, of any width, whose bits IntBits
// gives (zero-extended: equal keys of one type hash alike).
func Uint64(x uint64) uint64 {
	return mix(x, x, 8)
}

// mix mixes the words x and y of a key of n bytes. The length goes into
// the second round: in the first, a short key's words, which leave high
// bytes free, could cancel it.
func mix(x, y, n uint64) uint64 {
	hi, lo := bits.Mul64(x^hashKeys[0], y^hashKeys[1])
	hi, lo = bits.Mul64(hi^lo^n, hashKeys[2])
	return hi ^ lo
}

// Of is the hash of k: String's for a string, Uint64's of IntBits for an
// integer, and Comparable's for anything else. It is the one hash of a key
// in this repository: a table (internal/mvcc, which knows its key type
// once for all and calls String or Uint64 itself) and a trie hash a key
// alike, so that a writer that found a key in the table hands its hash to
// the tries and indexes of its subscribers rather than hashing it again.
// Its type switch over the predeclared types costs a comparison or two of
// type words; a named string or integer type (type NodeName string) is
// then told by its kind.
//
// Named types are hashed here rather than by maphash.Comparable for the
// purego build tag, under which maphash hashes through reflection and
// allocates on every call. In an ordinary build, called through a generic
// function as the trie calls it, a named int16 took 6.0 ns against
// maphash's 12.3 and a named 12-byte string 6.9 against 7.7; a struct key
// pays the kind test, 14.1 ns against 13.2.
func Of[K comparable](k K) uint64 {
	switch x := any(k).(type) {
	case string:
		return String(x)
	case int:
		return Uint64(uint64(x))
	case uint64:
		return Uint64(x)
	case int64:
		return Uint64(uint64(x))
	case uint32:
		return Uint64(uint64(x))
	case int32:
		return Uint64(uint64(uint32(x)))
	case uint:
		return Uint64(uint64(x))
	case uintptr:
		return Uint64(uint64(x))
	case uint16:
		return Uint64(uint64(x))
	case int16:
		return Uint64(uint64(uint16(x)))
	case uint8:
		return Uint64(uint64(x))
	case int8:
		return Uint64(uint64(uint8(x)))
	}
	if reflect.TypeFor[K]().Kind() == reflect.String {
		return String(*(*string)(unsafe.Pointer(&k)))
	}
	if n := IntSize[K](); n != 0 {
		return Uint64(IntBits(n, unsafe.Pointer(&k)))
	}
	return Comparable(k)
}

// Comparable is the hash of a key that is neither a string nor an
// integer: maphash.Comparable's, with this package's seed.
func Comparable[K comparable](k K) uint64 { return maphash.Comparable(seed, k) }

// IntSize is the size of K in bytes if it is an integer type, named or
// not, and 0 otherwise: a caller that knows K once for all hashes such
// keys with IntBits and Uint64.
func IntSize[K comparable]() uint8 {
	switch t := reflect.TypeFor[K](); t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uint8(t.Size())
	}
	return 0
}

// IntBits returns the bits of the integer of size bytes (IntSize's) at p,
// zero-extended. Equal integers of one type have equal bits.
func IntBits(size uint8, p unsafe.Pointer) uint64 {
	switch size {
	case 8:
		return *(*uint64)(p)
	case 4:
		return uint64(*(*uint32)(p))
	case 2:
		return uint64(*(*uint16)(p))
	default:
		return uint64(*(*uint8)(p))
	}
}
