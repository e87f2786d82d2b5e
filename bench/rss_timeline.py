"""Peak and timeline of a command's resident memory: runs the command, samples VmRSS from
/proc/PID/status every 2 ms, prints the peak (seconds, MiB) and ~50 samples.

usage: python3 bench/rss_timeline.py CMD [ARGS...]   (Linux only)
"""
import subprocess,time,sys
p=subprocess.Popen(sys.argv[1:],stdout=subprocess.DEVNULL)
t0=time.time();samples=[]
while p.poll() is None:
    try:
        for l in open(f'/proc/{p.pid}/status'):
            if l.startswith('VmRSS'):
                samples.append((time.time()-t0,int(l.split()[1])//1024))
    except Exception: pass
    time.sleep(0.002)
m=max(samples,key=lambda x:x[1]);print('max',m,'n',len(samples))
for i in range(0,len(samples),max(1,len(samples)//50)): print('%.3f %d'%samples[i])
