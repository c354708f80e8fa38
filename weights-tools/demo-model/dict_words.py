#!/usr/bin/env python3
"""Share of dictionary words in the engine's samples: 200 tokens at temperature 0.8 for 4 prompts x 5 seeds,
words = runs of letters (with an apostrophe suffix), checked against /usr/share/dict/american-english.
Run from the repository root: python3 weights-tools/demo-model/dict_words.py
"""
import json,subprocess,re,sys
D=set(w.strip().lower() for w in open('/usr/share/dict/american-english',encoding='utf-8',errors='ignore'))
def frac(text):
    words=re.findall(r"[A-Za-z]+(?:'[A-Za-z]+)?",text)
    ok=0
    for w in words:
        l=w.lower()
        if l in D or re.sub(r"'(s|t|d|ll|re|ve|m)$","",l) in D or l.endswith("n't") and l[:-3] in D: ok+=1
    return ok,len(words)
tot=[0,0]; res=[]
for prompt in (sys.argv[1:] or ["The","It was a","The jury said that","<|endoftext|>"]):
  for seed in [1,2,3,42,1234]:
    args=['nice','./build/native/gpt2','generate','--model','web/models/brown-demo','--max-new-tokens','200','--temperature','0.8','--seed',str(seed),'--json','1']
    args+= ['--ids','50256'] if prompt=='<|endoftext|>' else ['--prompt',prompt]
    r=subprocess.run(args,capture_output=True,text=True,env={'LP_NUM_THREADS':'1','PATH':'/usr/bin:/bin'})
    j=json.loads(r.stdout)
    if 'text' not in j:  # --ids prompts come back as ids only
        d=subprocess.run(['./build/native/gpt2','detokenize','--model','web/models/brown-demo','--ids',','.join(map(str,j['ids']))],capture_output=True,text=True)
        j['text']=json.loads(d.stdout)['text']
    t=j['text']; o,n=frac(t); tot[0]+=o; tot[1]+=n; res.append(o/n)
    print(f'{prompt!r:22} seed {seed:5}: {o}/{n} = {o/n:.3f}')
print('overall',tot[0]/tot[1],'min',min(res))
