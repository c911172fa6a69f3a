;; Chained KV-block identities (domain/block-hash.ts): for each of n blocks of bs int32 token ids, XXH64 of the
;; block's bytes (little-endian) seeded with the previous block's identity, cut to 53 bits (0 becomes 1) and
;; stored as an f64. Assembled into the bytes in block-hash-wasm.ts; a test re-assembles this file and compares.
;;
;; chain(tok, n, bs, parent, out): blocks start at byte offset tok, one after another; identities go to the f64s
;; at byte offset out. parent is the first block's parent identity (an integer below 2^53; 0 = none).
;;
;; XXH64 (github.com/Cyan4973/xxHash, doc/xxhash_spec.md) with its primes P1 = 0x9E3779B185EBCA87,
;; P2 = 0xC2B2AE3D27D4EB4F, P3 = 0x165667B19E3779F9, P4 = 0x85EBCA77C2B2AE63, P5 = 0x27D4EB2F165667C5; its
;; round(acc, v) = rotl(acc + v * P2, 31) * P1 is written out where it is used (no calls in the hot loop).
;; 0x60EA27EEADC0B5D6 is P1 + P2 (mod 2^64).
(module
  (memory (export "mem") 12)

  ;; XXH64 of the len bytes at p (len a multiple of 4), seeded with seed.
  (func $xxh64 (param $p i32) (param $len i32) (param $seed i64) (result i64)
    (local $end i32) (local $h i64)
    (local $v1 i64) (local $v2 i64) (local $v3 i64) (local $v4 i64)
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (if (i32.ge_u (local.get $len) (i32.const 32))
      (then
        (local.set $v1 (i64.add (local.get $seed) (i64.const 0x60EA27EEADC0B5D6)))
        (local.set $v2 (i64.add (local.get $seed) (i64.const 0xC2B2AE3D27D4EB4F)))
        (local.set $v3 (local.get $seed))
        (local.set $v4 (i64.sub (local.get $seed) (i64.const 0x9E3779B185EBCA87)))
        (block $done
          (loop $stripes
            (br_if $done (i32.gt_u (i32.add (local.get $p) (i32.const 32)) (local.get $end)))
            (local.set $v1
              (i64.mul
                (i64.rotl (i64.add (local.get $v1) (i64.mul (i64.load (local.get $p)) (i64.const 0xC2B2AE3D27D4EB4F))) (i64.const 31))
                (i64.const 0x9E3779B185EBCA87)))
            (local.set $v2
              (i64.mul
                (i64.rotl (i64.add (local.get $v2) (i64.mul (i64.load offset=8 (local.get $p)) (i64.const 0xC2B2AE3D27D4EB4F))) (i64.const 31))
                (i64.const 0x9E3779B185EBCA87)))
            (local.set $v3
              (i64.mul
                (i64.rotl (i64.add (local.get $v3) (i64.mul (i64.load offset=16 (local.get $p)) (i64.const 0xC2B2AE3D27D4EB4F))) (i64.const 31))
                (i64.const 0x9E3779B185EBCA87)))
            (local.set $v4
              (i64.mul
                (i64.rotl (i64.add (local.get $v4) (i64.mul (i64.load offset=24 (local.get $p)) (i64.const 0xC2B2AE3D27D4EB4F))) (i64.const 31))
                (i64.const 0x9E3779B185EBCA87)))
            (local.set $p (i32.add (local.get $p) (i32.const 32)))
            (br $stripes)))
        (local.set $h
          (i64.add
            (i64.add (i64.rotl (local.get $v1) (i64.const 1)) (i64.rotl (local.get $v2) (i64.const 7)))
            (i64.add (i64.rotl (local.get $v3) (i64.const 12)) (i64.rotl (local.get $v4) (i64.const 18)))))
        (local.set $h
          (i64.add
            (i64.mul
              (i64.xor (local.get $h)
                (i64.mul (i64.rotl (i64.mul (local.get $v1) (i64.const 0xC2B2AE3D27D4EB4F)) (i64.const 31)) (i64.const 0x9E3779B185EBCA87)))
              (i64.const 0x9E3779B185EBCA87))
            (i64.const 0x85EBCA77C2B2AE63)))
        (local.set $h
          (i64.add
            (i64.mul
              (i64.xor (local.get $h)
                (i64.mul (i64.rotl (i64.mul (local.get $v2) (i64.const 0xC2B2AE3D27D4EB4F)) (i64.const 31)) (i64.const 0x9E3779B185EBCA87)))
              (i64.const 0x9E3779B185EBCA87))
            (i64.const 0x85EBCA77C2B2AE63)))
        (local.set $h
          (i64.add
            (i64.mul
              (i64.xor (local.get $h)
                (i64.mul (i64.rotl (i64.mul (local.get $v3) (i64.const 0xC2B2AE3D27D4EB4F)) (i64.const 31)) (i64.const 0x9E3779B185EBCA87)))
              (i64.const 0x9E3779B185EBCA87))
            (i64.const 0x85EBCA77C2B2AE63)))
        (local.set $h
          (i64.add
            (i64.mul
              (i64.xor (local.get $h)
                (i64.mul (i64.rotl (i64.mul (local.get $v4) (i64.const 0xC2B2AE3D27D4EB4F)) (i64.const 31)) (i64.const 0x9E3779B185EBCA87)))
              (i64.const 0x9E3779B185EBCA87))
            (i64.const 0x85EBCA77C2B2AE63))))
      (else
        (local.set $h (i64.add (local.get $seed) (i64.const 0x27D4EB2F165667C5)))))
    (local.set $h (i64.add (local.get $h) (i64.extend_i32_u (local.get $len))))
    (block $done8
      (loop $words
        (br_if $done8 (i32.gt_u (i32.add (local.get $p) (i32.const 8)) (local.get $end)))
        (local.set $h
          (i64.xor (local.get $h)
            (i64.mul (i64.rotl (i64.mul (i64.load (local.get $p)) (i64.const 0xC2B2AE3D27D4EB4F)) (i64.const 31)) (i64.const 0x9E3779B185EBCA87))))
        (local.set $h
          (i64.add
            (i64.mul (i64.rotl (local.get $h) (i64.const 27)) (i64.const 0x9E3779B185EBCA87))
            (i64.const 0x85EBCA77C2B2AE63)))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (br $words)))
    (if (i32.le_u (i32.add (local.get $p) (i32.const 4)) (local.get $end))
      (then
        (local.set $h
          (i64.xor (local.get $h) (i64.mul (i64.load32_u (local.get $p)) (i64.const 0x9E3779B185EBCA87))))
        (local.set $h
          (i64.add
            (i64.mul (i64.rotl (local.get $h) (i64.const 23)) (i64.const 0xC2B2AE3D27D4EB4F))
            (i64.const 0x165667B19E3779F9)))))
    (local.set $h (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 33))))
    (local.set $h (i64.mul (local.get $h) (i64.const 0xC2B2AE3D27D4EB4F)))
    (local.set $h (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 29))))
    (local.set $h (i64.mul (local.get $h) (i64.const 0x165667B19E3779F9)))
    (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 32))))

  (func (export "chain") (param $tok i32) (param $n i32) (param $bs i32) (param $parent f64) (param $out i32)
    (local $len i32) (local $seed i64) (local $h i64) (local $i i32)
    (local.set $len (i32.shl (local.get $bs) (i32.const 2)))
    (local.set $seed (i64.trunc_f64_u (local.get $parent)))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $h (i64.and (call $xxh64 (local.get $tok) (local.get $len) (local.get $seed)) (i64.const 0x1FFFFFFFFFFFFF)))
        (if (i64.eqz (local.get $h)) (then (local.set $h (i64.const 1))))
        (f64.store (local.get $out) (f64.convert_i64_u (local.get $h)))
        (local.set $seed (local.get $h))
        (local.set $tok (i32.add (local.get $tok) (local.get $len)))
        (local.set $out (i32.add (local.get $out) (i32.const 8)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $blocks))))
)
