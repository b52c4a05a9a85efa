set terminal pngcairo size 1200,840 font ',10'
set output 'steps.png'
set multiplot layout 2,2 title 'llcd-bench: steps/s per run and placement'
set xlabel 'run'
set ylabel 'steps/s'
set key below horizontal
set xtics 1
set grid ytics
set yrange [0:*]
set offsets 0.3,0.3,0,0
set title 'host: share'
plot 'steps.dat' index 0 using 1:2 with linespoints pt 7 title 'one-llc', 'steps.dat' index 1 using 1:2 with linespoints pt 7 title 'spread', 'steps.dat' index 2 using 1:2 with linespoints pt 7 title 'kernel'
set title 'host: triad'
plot 'steps.dat' index 3 using 1:2 with linespoints pt 7 title 'one-llc', 'steps.dat' index 4 using 1:2 with linespoints pt 7 title 'spread', 'steps.dat' index 5 using 1:2 with linespoints pt 7 title 'kernel'
set title 'host: private'
plot 'steps.dat' index 6 using 1:2 with linespoints pt 7 title 'one-llc', 'steps.dat' index 7 using 1:2 with linespoints pt 7 title 'spread', 'steps.dat' index 8 using 1:2 with linespoints pt 7 title 'kernel'
set title 'guest (TCG): share'
plot 'steps.dat' index 9 using 1:2 with linespoints pt 7 title 'none', 'steps.dat' index 10 using 1:2 with linespoints pt 7 title 'llcd-annotation'
unset multiplot
