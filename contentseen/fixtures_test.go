package contentseen

// Fixtures written for these tests (not taken from any site).

// articleBody is an invented local news article of about 700 words, a
// common length for news (shorter texts move further for the same edit:
// see TestNearDuplicates).
const articleBody = `The city council voted seven to two on Tuesday evening to approve a new riverside park on the site of the former textile mill, ending a debate that has divided neighbourhood groups for almost two years. The plan converts eleven hectares of derelict industrial land into meadows, a cycling path and a small harbour for rowing clubs. Construction is expected to begin next spring and to last eighteen months.

Supporters argued that the eastern districts have the fewest green spaces per resident in the region and that the mill buildings had been empty since the factory closed in 2009. Opponents on the council questioned the cost, estimated at 34 million euros, and asked whether contaminated soil along the riverbank had been fully surveyed. The environmental report presented in March found traces of heavy metals in two areas, which the contractor will excavate and replace before any planting begins.

The mayor said the park would be financed partly by a regional development grant and partly by selling a strip of land on the northern edge to a housing cooperative. Local residents will be invited to three public workshops this summer to help choose playground equipment, lighting and the names of the new footbridges.

Not everyone is convinced. The rowing clubs, which have trained on this stretch of the river for more than a century, welcomed the harbour but warned that the proposed cycling path would cut through the area where boats are carried to the water. A spokesperson for the clubs said they had written to the planning department twice without receiving an answer. The council's planning director replied that the route was not final and that the clubs would be consulted before the detailed design is submitted in the autumn.

Shop owners on Mill Street are hoping for more visitors. Several cafés closed during the long period of uncertainty, and the street's association has asked the council to add benches, bicycle racks and a weekly market square at the park entrance. Historians, for their part, want the brick chimney of the old mill to be preserved as a landmark. The architects have included the chimney in their drawings, together with a small exhibition about the textile workers who once made the district one of the busiest in the country.

The mill itself has a long history. It opened in 1874 with two hundred looms powered by a water wheel, and at its peak after the war it employed more than three thousand people, most of them women from the surrounding streets. Production moved abroad in stages during the nineties, and by the time the last shift ended the workforce had fallen to under four hundred. Former employees have formed a group to collect photographs, tools and recorded memories for the planned exhibition, and they meet every second Thursday in the library on Mill Street.

Transport planners expect the park to change how people move through the eastern districts. The new footbridges will connect the housing estates on the far bank with the tram stop at the station, shortening the walk for several thousand residents by up to twenty minutes. The council has also asked the regional transport authority to add a bus stop at the park entrance and to extend the evening service on weekends, when the meadows and the harbour are expected to draw the most visitors.

Environmental groups broadly support the plan but want the council to go further. They have asked for a wetland zone at the northern end, where the river floods most winters, arguing that it would protect the new housing from high water and give birds and amphibians a refuge. The contractor has said a wetland is technically possible but would add several months to the schedule. The council will decide on the proposal at its next meeting in June, after a further report from the water authority on flood risk along the whole eastern bank.`

// article is the article as its first site published it.
const article = "City council approves new riverside park after two years of debate\n\n" + articleBody

// articleRepost is the same article on another site: another title line
// and an advertising line added at the end.
const articleRepost = "Council backs riverside park plan for old textile mill site\n\n" + articleBody +
	"\n\nAdvertisement: subscribe now and read all our local news for one euro a month."

// unrelatedArticle is an invented article on another subject, of similar
// length, sharing the house style of the first.
const unrelatedArticle = `Regional rail operator announces timetable changes for the winter season

The regional rail operator published its winter timetable on Monday, with more frequent trains on the coastal line and fewer late services on two rural branches. From December, trains between the harbour and the university will run every fifteen minutes during the morning and evening peaks instead of every twenty. The operator said passenger numbers on the coastal line rose by a quarter over the past year, while the last trains on the valley branches carried on average fewer than ten travellers.
Commuter associations welcomed the extra peak trains but criticised the cuts, arguing that shift workers at the hospital and the ferry terminal depend on late connections. The operator promised a replacement bus on Friday and Saturday nights and said it would review the decision after six months. Tickets bought before the change remain valid, and the new timetable is available at stations and online.`

// newsZhHead is the first paragraph of newsZh.
const newsZhHead = `本市交通运输局昨天宣布，从下个月起将在城区新增十二条公交线路，并延长地铁二号线和五号线的夜间运营时间。据介绍，新线路主要覆盖近年来人口增长较快的东部新区和南部工业园区，预计每天可服务乘客约八万人次。交通运输局负责人表示，新增线路将全部使用纯电动公交车，车辆配备无障碍设施和实时到站信息显示屏。市民可以通过官方网站和手机应用程序查询具体线路和发车时间。`

// newsZhTail is the rest of newsZh.
const newsZhTail = `

近年来，随着城市规模不断扩大，东部新区已建成多个大型住宅小区，但公共交通配套相对滞后，不少居民反映早晚高峰时段等车时间过长，换乘也不方便。一位在南部工业园区上班的市民告诉记者，他每天需要先骑自行车到地铁站，再换乘两趟公交车才能到达单位，单程花费一个多小时。新线路开通后，他可以直接从小区门口乘车到园区，通勤时间有望缩短一半。

交通运输局表示，新线路的走向和站点设置参考了市民热线和网上征求意见的结果，开通三个月后还将根据客流数据进行评估和调整。与此同时，有关部门还计划在明年年底前完成全市公交站台的升级改造工作，届时乘客候车环境将得到明显改善。专家指出，发展公共交通是缓解城市拥堵、减少碳排放的重要手段，但也需要在票价、换乘优惠和线路衔接等方面持续完善，才能真正吸引更多市民选择绿色出行。`

// newsZh is an invented Chinese news article (Simplified script), about
// 650 characters.
const newsZh = newsZhHead + newsZhTail

// otherZh is an invented Chinese paragraph on another subject.
const otherZh = `今年夏天，全省多地遭遇持续高温天气，部分地区最高气温超过四十摄氏度。气象部门提醒市民减少午后户外活动，注意防暑降温，农业部门则组织技术人员深入田间，指导农民做好抗旱保苗工作。电力公司表示，用电负荷连续刷新历史纪录，但电网运行总体平稳，居民生活用电得到保障。`

// newsZhTraditional is the first two sentences of newsZh in Traditional
// script, as a Hong Kong or Taiwan site would repost them.
const newsZhTraditional = `本市交通運輸局昨天宣佈，從下個月起將在城區新增十二條公交線路，並延長地鐵二號線和五號線的夜間運營時間。據介紹，新線路主要覆蓋近年來人口增長較快的東部新區和南部工業園區，預計每天可服務乘客約八萬人次。`

// newsZhTraditionalOriginal is the Simplified text newsZhTraditional was
// written from: the first two sentences of newsZh.
const newsZhTraditionalOriginal = `本市交通运输局昨天宣布，从下个月起将在城区新增十二条公交线路，并延长地铁二号线和五号线的夜间运营时间。据介绍，新线路主要覆盖近年来人口增长较快的东部新区和南部工业园区，预计每天可服务乘客约八万人次。`
