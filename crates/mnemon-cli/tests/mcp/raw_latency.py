"""Recall latency of `mnemon serve` measured with raw JSON-RPC lines over its stdin/stdout (no SDK).

Usage: python crates/mnemon-cli/tests/mcp/raw_latency.py [path/to/mnemon]  (needs PyYAML and ../shared/eval/loopal-58)
"""
import json, subprocess, sys, time, yaml, shutil, tempfile, pathlib
ROOT=pathlib.Path(__file__).resolve().parents[4]
BIN=sys.argv[1] if len(sys.argv) > 1 else str(ROOT/"target"/"release"/"mnemon"); LOOPAL=ROOT.parent/"shared"/"eval"/"loopal-58"
tmp=pathlib.Path(tempfile.mkdtemp())/".mnemon"
subprocess.run([BIN,"init","--dir",str(tmp)],check=True,capture_output=True)
for p in (LOOPAL/"fixtures").glob("*.md"): shutil.copy(p,tmp/"memory"/p.name)
p=subprocess.Popen([BIN,"serve","--dir",str(tmp),"--no-watch"],stdin=subprocess.PIPE,stdout=subprocess.PIPE,stderr=subprocess.DEVNULL,text=True,bufsize=1)
def rpc(i,method,params=None):
    msg={"jsonrpc":"2.0","id":i,"method":method}
    if params is not None: msg["params"]=params
    p.stdin.write(json.dumps(msg)+"\n"); p.stdin.flush()
    while True:
        line=p.stdout.readline(); r=json.loads(line)
        if r.get("id")==i: return r
rpc(1,"initialize",{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"raw","version":"0"}})
p.stdin.write(json.dumps({"jsonrpc":"2.0","method":"notifications/initialized"})+"\n"); p.stdin.flush()
qs=yaml.safe_load((LOOPAL/"ground_truth.yaml").read_text())["queries"]
ts=[]; i=10
for _ in range(5):
    for q in qs:
        a={"depth":2,"limit":10}
        if q.get("query"): a["query"]=q["query"]
        if q.get("anchors"): a["anchors"]=q["anchors"]
        i+=1; t=time.perf_counter(); r=rpc(i,"tools/call",{"name":"memory_recall","arguments":a}); ts.append((time.perf_counter()-t)*1e6)
        assert not r["result"].get("isError"), r
ts.sort(); print(f"raw JSON-RPC over stdio, {len(ts)} recalls: p50 {ts[len(ts)//2]:.0f} us, p99 {ts[int(len(ts)*0.99)]:.0f} us")
p.stdin.close(); p.wait()
