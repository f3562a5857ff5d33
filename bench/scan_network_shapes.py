"""Scan of compute operators at the shapes of ResNet-50, BERT and MobileNet (session 19, s19g):
each tessera.topi operator built with no schedule beside numpy's best equivalent (im2col + BLAS,
np.matmul, one multiply-add pass per filter tap), one thread, thread CPU time, timed in turn.

    BENCH_TIMER=cpu PYTHONPATH=python .venv/bin/python bench/scan_network_shapes.py [dense,matmul]
"""

import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tessera as ts  # noqa: E402
from tessera import te  # noqa: E402
from tessera.topi import nn  # noqa: E402

from bench_cpu import interleaved_min  # noqa: E402
from bench_topi import conv_transpose, group_conv  # noqa: E402

rng = np.random.default_rng(0)

def nhwc_ref(s):
    def f(x, w):
        n,h,wd,c = x.shape; kh,kw,_,fo = w.shape
        cols = np.lib.stride_tricks.sliding_window_view(x,(kh,kw),axis=(1,2))[:, ::s, ::s]
        oh, ow = cols.shape[1], cols.shape[2]
        cols = cols.transpose(0,1,2,4,5,3).reshape(n*oh*ow, kh*kw*c)
        return (cols @ w.reshape(-1,fo)).reshape(n,oh,ow,fo)
    return f
def dw_nchw_ref(s):
    def f(x,w):
        n,c,h,wd = x.shape; _,_,kh,kw = w.shape
        oh=(h-kh)//s+1; ow=(wd-kw)//s+1
        out = np.zeros((n,c,oh,ow),x.dtype)
        for i in range(kh):
            for j in range(kw):
                out += x[:,:,i:i+s*(oh-1)+1:s, j:j+s*(ow-1)+1:s]*w[:,0,i,j][:,None,None]
        return out
    return f
def dw_nhwc_ref(s):
    def f(x,w):
        n,h,wd,c = x.shape; kh,kw = w.shape[:2]
        oh=(h-kh)//s+1; ow=(wd-kw)//s+1
        out = np.zeros((n,oh,ow,c),x.dtype)
        for i in range(kh):
            for j in range(kw):
                out += x[:,i:i+s*(oh-1)+1:s, j:j+s*(ow-1)+1:s]*w[i,j,:,0]
        return out
    return f

cases = []
def add(name, shapes, make, ref, rtol=1e-3):
    cases.append((name, shapes, make, ref, rtol))
# conv2d nhwc
for (sp, c, f, k, s) in [(56,64,64,3,1),(56,64,256,1,1),(28,128,128,3,1),(28,512,128,1,1),(14,256,256,3,1),(14,1024,256,1,1),(7,512,512,3,1),(7,2048,512,1,1),(56,128,128,3,2),(28,256,512,1,2)]:
    h = sp + k - 1 if s == 1 else 2*sp + k - 2
    add(f"conv2d_nhwc {k}x{k} s{s} {sp} {c}->{f}", [(1,h,h,c),(k,k,c,f)],
        lambda x,w,s=s: nn.conv2d_nhwc(x,w,s,0,1,out_dtype="float32"), nhwc_ref(s))
add("conv2d_transpose s2 14->28 256->128", [(1,256,14,14),(256,128,4,4)],
    lambda x,w: nn.conv2d_transpose_nchw(x,w,(2,2),(1,1),"float32",(0,0)), lambda x,w: conv_transpose(x,w,2,1))
for (sp,c,s) in [(112,32,1),(112,64,2),(56,128,1),(28,256,1),(14,512,1),(14,512,2),(7,1024,1)]:
    h = sp+2 if s==1 else 2*sp+1
    add(f"dw_nchw 3x3 s{s} {sp} c{c}", [(1,c,h,h),(c,1,3,3)], lambda x,w,s=s: nn.depthwise_conv2d_nchw(x,w,s,0,1), dw_nchw_ref(s))
    add(f"dw_nhwc 3x3 s{s} {sp} c{c}", [(1,h,h,c),(3,3,c,1)], lambda x,w,s=s: nn.depthwise_conv2d_nhwc(x,w,s,0,1), dw_nhwc_ref(s))
for (b,k,n) in [(2,768,1000),(4,768,1000),(8,768,1000),(1,768,1000),(1,2048,1000),(16,768,3072),(128,1024,1000),(128,4096,1000),(1,4096,1000)]:
    add(f"dense {b}x{k}->{n}", [(b,k),(n,k)], nn.dense, lambda a,b: a@b.T)
for (m,k,n) in [(384,768,768),(1000,1000,1000),(100,100,100),(127,255,129)]:
    add(f"matmul {m}x{k}x{n}", [(m,k),(k,n)], nn.matmul, np.matmul)
add("batch_matmul (12,384,64)x(12,64,384)", [(12,384,64),(12,64,384)], lambda a,b: nn.batch_matmul(a,b,transpose_b=False), np.matmul)
add("batch_matmul (12,384,384)x(12,384,64)", [(12,384,384),(12,384,64)], lambda a,b: nn.batch_matmul(a,b,transpose_b=False), np.matmul)
add("group_conv2d_nchw g32 56 128->128", [(1,128,58,58),(128,4,3,3)], lambda x,w: nn.group_conv2d_nchw(x,w,1,0,1,32), lambda x,w: group_conv(x,w,32))
add("group_conv2d_nchw g32 14 512->512", [(1,512,16,16),(512,16,3,3)], lambda x,w: nn.group_conv2d_nchw(x,w,1,0,1,32), lambda x,w: group_conv(x,w,32))

only = sys.argv[1] if len(sys.argv) > 1 else ""
for name, shapes, make, ref, rtol in cases:
    if only and not any(o in name for o in only.split(",")): continue
    try:
        ph = [te.placeholder(s,"float32",name=f"in{i}") for i,s in enumerate(shapes)]
        out = make(*ph)
        t0=time.time(); lib = ts.build(te.create_prim_func(ph+[out]), target="c"); bt=time.time()-t0
        arrs = [rng.standard_normal(s).astype("float32") for s in shapes]
        res = np.empty([int(getattr(d,"value",d)) for d in out.shape],"float32")
        lib(*arrs,res)
        np.testing.assert_allclose(res, ref(*arrs), rtol=rtol, atol=rtol*10)
        ours, r = interleaved_min([lambda: lib(*arrs,res), lambda: ref(*arrs)], rounds=6)
        print(f"{name:45s} ts {ours*1e3:9.3f} ms  np {r*1e3:9.3f} ms  ratio {r/ours:6.2f}  build {bt:4.1f}s", flush=True)
    except Exception as e:
        print(f"{name:45s} FAILED {type(e).__name__}: {str(e)[:200]}", flush=True)
