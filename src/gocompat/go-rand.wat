(module
  ;; Go's additive lagged Fibonacci source (607 x i64 at offset 0) and Int31n, filling i32 draws at OUT.
  (memory (export "mem") 8)
  (func (export "fill") (param $count i32) (param $n i32) (param $max i32) (param $pow2 i32) (param $tap i32) (param $feed i32) (param $out i32)
    (local $i i32) (local $x i64) (local $v i32) (local $m i32)
    (local.set $m (i32.sub (local.get $n) (i32.const 1)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $tap (i32.sub (local.get $tap) (i32.const 1)))
        (if (i32.lt_s (local.get $tap) (i32.const 0)) (then (local.set $tap (i32.add (local.get $tap) (i32.const 607)))))
        (local.set $feed (i32.sub (local.get $feed) (i32.const 1)))
        (if (i32.lt_s (local.get $feed) (i32.const 0)) (then (local.set $feed (i32.add (local.get $feed) (i32.const 607)))))
        (local.set $x (i64.add
          (i64.load (i32.shl (local.get $feed) (i32.const 3)))
          (i64.load (i32.shl (local.get $tap) (i32.const 3)))))
        (i64.store (i32.shl (local.get $feed) (i32.const 3)) (local.get $x))
        (local.set $v (i32.and (i32.wrap_i64 (i64.shr_u (local.get $x) (i64.const 32))) (i32.const 0x7fffffff)))
        (if (local.get $pow2)
          (then
            (i32.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2))) (i32.and (local.get $v) (local.get $m)))
            (local.set $i (i32.add (local.get $i) (i32.const 1))))
          (else
            (if (i32.le_u (local.get $v) (local.get $max))
              (then
                (i32.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2))) (i32.rem_u (local.get $v) (local.get $n)))
                (local.set $i (i32.add (local.get $i) (i32.const 1)))))))
        (br $next)))
    ;; tap, feed and the last draw's low word, for the caller
    (i32.store (i32.const 4864) (local.get $tap))
    (i32.store (i32.const 4868) (local.get $feed))
    (i32.store (i32.const 4872) (i32.wrap_i64 (local.get $x))))
)
