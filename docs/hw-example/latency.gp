set terminal pngcairo size 490,340 font ',10'
set output 'latency.png'
set title 'core-to-core latency (ns, one way)'
set xtics ('0' 0, '1' 1) rotate by 90
set ytics ('0' 0, '1' 1)
set xlabel 'CPU'
set ylabel 'CPU'
set yrange [] reverse
set xrange [-0.5:1.5]
set yrange [1.5:-0.5]
set palette rgbformulae 22,13,-31
set cblabel 'ns'
set cbrange [0:*]
set size ratio -1
plot 'latency.dat' matrix with image notitle, '' matrix using 1:2:($3 == $3 ? sprintf('%.0f', $3) : '') with labels font ',9' notitle
